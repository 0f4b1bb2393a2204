// Initialisation with PyTorch's formulas (torch/nn/init.py).
#include "tandem/nn/init.h"

#include <cmath>

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"

namespace tandem::nn::init {
namespace {

int64_t correct_fan(const Tensor& tensor, FanMode mode) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return mode == kFanIn ? fan_in : fan_out;
}

// PyTorch leaves zero-element tensors alone (their fan may be 0).
bool is_empty(const Tensor& tensor) { return tensor.numel() == 0; }

double xavier_std(const Tensor& tensor, double gain) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out));
}

}  // namespace

double calculate_gain(Nonlinearity nonlinearity, double param) {
  switch (nonlinearity) {
    case kLinear:
    case kConv1D:
    case kConv2D:
    case kConv3D:
    case kConvTranspose1D:
    case kConvTranspose2D:
    case kConvTranspose3D:
    case kSigmoid:
      return 1.0;
    case kTanh:
      return 5.0 / 3;
    case kReLU:
      return std::sqrt(2.0);
    case kLeakyReLU:
      TANDEM_CHECK(std::isfinite(param),
                   "calculate_gain: negative_slope ",
                   param,
                   " is not a valid number");
      return std::sqrt(2.0 / (1 + param * param));
    case kSELU:
      return 3.0 / 4;
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown nonlinearity");
}

std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  TANDEM_CHECK(tensor.dim() >= 2,
               "Fan in and fan out can not be computed for tensor with fewer than 2 "
               "dimensions (got shape ",
               tensor.sizes(),
               ")");
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard no_grad;
  tensor.uniform_(low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard no_grad;
  tensor.normal_(mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, Scalar value) {
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }

Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor kaiming_uniform_(Tensor tensor,
                        double a,
                        FanMode mode,
                        Nonlinearity nonlinearity) {
  if (is_empty(tensor)) return tensor;
  const double std = calculate_gain(nonlinearity, a) /
                     std::sqrt(static_cast<double>(correct_fan(tensor, mode)));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity) {
  if (is_empty(tensor)) return tensor;
  const double std = calculate_gain(nonlinearity, a) /
                     std::sqrt(static_cast<double>(correct_fan(tensor, mode)));
  return normal_(std::move(tensor), 0, std);
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  const double bound = std::sqrt(3.0) * xavier_std(tensor, gain);
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  const double std = xavier_std(tensor, gain);
  return normal_(std::move(tensor), 0, std);
}

}  // namespace tandem::nn::init
