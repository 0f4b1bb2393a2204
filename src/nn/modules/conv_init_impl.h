// Private: PyTorch's reset_parameters of its convolution layers (_ConvNd),
// shared by Conv2d and the transposed convolutions. The fans come from the
// weight's layout, so a transposed weight [in, out / groups, k...] gets
// fan_in = out / groups * prod(k), as in PyTorch.
#pragma once

#include <cmath>
#include <cstdint>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/init.h"

namespace tandem::nn::detail {

/// weight from kaiming_uniform_(a=sqrt(5)); bias (when defined) from
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
inline void reset_conv_parameters(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, /*a=*/std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = std::get<0>(init::calculate_fan_in_and_fan_out(weight));
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

}  // namespace tandem::nn::detail
