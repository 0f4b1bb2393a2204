// Private: what PyTorch's convolution layers (_ConvNd) share, used by
// Conv1d, Conv2d and the transposed convolutions: the channel checks of
// reset, reset_parameters and the printed form. The fans come from the
// weight's layout, so a transposed weight [in, out / groups, k...] gets
// fan_in = out / groups * prod(k), as in PyTorch.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>

#include "tandem/core/error.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/init.h"
#include "tandem/ops/expanding_array.h"

namespace tandem::nn::detail {

/// Throws unless the channel counts are positive and groups divides both,
/// naming the layer.
inline void check_conv_channels(const char* layer,
                                int64_t in,
                                int64_t out,
                                int64_t groups) {
  TANDEM_CHECK(in > 0 && out > 0,
               layer,
               ": in_channels and out_channels must be positive, got ",
               in,
               " and ",
               out);
  TANDEM_CHECK(groups > 0, layer, ": groups must be positive, got ", groups);
  TANDEM_CHECK(in % groups == 0 && out % groups == 0,
               layer,
               ": groups=",
               groups,
               " must divide in_channels (",
               in,
               ") and out_channels (",
               out,
               ")");
}

/// weight from kaiming_uniform_(a=sqrt(5)); bias (when defined) from
/// U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
inline void reset_conv_parameters(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, /*a=*/std::sqrt(5.0));
  if (!bias.defined()) return;
  const int64_t fan_in = std::get<0>(init::calculate_fan_in_and_fan_out(weight));
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  init::uniform_(bias, -bound, bound);
}

/// `name(in, out, kernel_size=..., stride=...)` in LibTorch's layout: the
/// other options only where they differ from their defaults (output_padding
/// for the transposed layers, whose options have it).
template <size_t D, typename Options>
void print_conv(std::ostream& stream, const std::string& name, const Options& options) {
  stream << name << "(" << options.in_channels() << ", " << options.out_channels()
         << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  if (options.padding() != ExpandingArray<D>(0))
    stream << ", padding=" << options.padding();
  if (options.dilation() != ExpandingArray<D>(1)) {
    stream << ", dilation=" << options.dilation();
  }
  if constexpr (requires { options.output_padding(); }) {
    if (options.output_padding() != ExpandingArray<D>(0)) {
      stream << ", output_padding=" << options.output_padding();
    }
  }
  if (options.groups() != 1) stream << ", groups=" << options.groups();
  if (!options.bias()) stream << ", bias=false";
  stream << ")";
}

}  // namespace tandem::nn::detail
