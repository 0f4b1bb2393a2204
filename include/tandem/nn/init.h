// Parameter initialisation, as torch.nn.init / LibTorch's torch::nn::init.
// Every function fills its tensor in place under NoGradGuard, draws from
// tandem's default generator (so manual_seed makes it reproducible) and
// returns the tensor.
//
//   namespace init = tandem::nn::init;
//   init::kaiming_uniform_(w, /*a=*/std::sqrt(5.0));      // Linear's default
//   init::kaiming_normal_(w, 0, tandem::kFanOut, tandem::kReLU);
//   init::xavier_uniform_(w, init::calculate_gain(tandem::kTanh));
//   init::zeros_(b);
#pragma once

#include <cstdint>
#include <tuple>

#include "tandem/core/tensor.h"

namespace tandem {

/// Which fan kaiming_* preserves: inputs (forward pass) or outputs (backward).
enum class FanMode { FanIn, FanOut };
inline constexpr FanMode kFanIn = FanMode::FanIn;
inline constexpr FanMode kFanOut = FanMode::FanOut;

/// The nonlinearity that follows a layer, for calculate_gain.
enum class Nonlinearity {
  Linear,
  Conv1D,
  Conv2D,
  Conv3D,
  ConvTranspose1D,
  ConvTranspose2D,
  ConvTranspose3D,
  Sigmoid,
  Tanh,
  ReLU,
  LeakyReLU,
  SELU,
};
inline constexpr Nonlinearity kLinear = Nonlinearity::Linear;
inline constexpr Nonlinearity kConv1D = Nonlinearity::Conv1D;
inline constexpr Nonlinearity kConv2D = Nonlinearity::Conv2D;
inline constexpr Nonlinearity kConv3D = Nonlinearity::Conv3D;
inline constexpr Nonlinearity kConvTranspose1D = Nonlinearity::ConvTranspose1D;
inline constexpr Nonlinearity kConvTranspose2D = Nonlinearity::ConvTranspose2D;
inline constexpr Nonlinearity kConvTranspose3D = Nonlinearity::ConvTranspose3D;
inline constexpr Nonlinearity kSigmoid = Nonlinearity::Sigmoid;
inline constexpr Nonlinearity kTanh = Nonlinearity::Tanh;
inline constexpr Nonlinearity kReLU = Nonlinearity::ReLU;
inline constexpr Nonlinearity kLeakyReLU = Nonlinearity::LeakyReLU;
inline constexpr Nonlinearity kSELU = Nonlinearity::SELU;

namespace nn::init {

/// The recommended gain for `nonlinearity`: 1 (linear, conv, sigmoid), 5/3
/// (tanh), sqrt(2) (relu), sqrt(2 / (1 + param^2)) (leaky relu with negative
/// slope `param`), 3/4 (selu).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
/// {fan_in, fan_out} of a weight [out, in, k...]: in*prod(k), out*prod(k).
/// Throws for tensors with fewer than 2 dimensions.
std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);
/// LibTorch's spelling.
inline std::tuple<int64_t, int64_t> _calculate_fan_in_and_fan_out(const Tensor& tensor) {
  return calculate_fan_in_and_fan_out(tensor);
}

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, Scalar value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

/// U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from
/// calculate_gain(nonlinearity, a) (He et al., 2015).
Tensor kaiming_uniform_(Tensor tensor,
                        double a = 0,
                        FanMode mode = kFanIn,
                        Nonlinearity nonlinearity = kLeakyReLU);
/// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor tensor,
                       double a = 0,
                       FanMode mode = kFanIn,
                       Nonlinearity nonlinearity = kLeakyReLU);
/// U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0);
/// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0);

}  // namespace nn::init
}  // namespace tandem
