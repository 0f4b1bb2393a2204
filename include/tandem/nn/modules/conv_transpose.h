// ConvTranspose1d and ConvTranspose2d: transposed convolution layers (the
// upsampling of a DCGAN generator), as LibTorch's torch::nn::ConvTranspose1d
// / ConvTranspose2d. The weight is [in, out / groups, kernel...]; they
// initialise like PyTorch, weight from kaiming_uniform_(a=sqrt(5)) and bias
// from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), where PyTorch's fan computation on
// that layout gives fan_in = out_channels / groups * prod(kernel_size).
//
//   tandem::nn::ConvTranspose2d up(
//       tandem::nn::ConvTranspose2dOptions(256, 128, 4).stride(2).padding(1));
//   auto y = up->forward(x);                // [N, 256, 4, 4] -> [N, 128, 8, 8]
//   auto z = up->forward(x, IntList{9, 9}); // output_padding chosen for 9x9
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>

#include "tandem/core/int_list.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/conv_transpose.h"

namespace tandem::nn {

/// The layer for D spatial dims; ConvTranspose1dImpl and
/// ConvTranspose2dImpl below are its two instances.
template <size_t D, typename Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options);

  /// Checks the options, creates weight [in, out / groups, kernel...] and
  /// bias [out], and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's reset_parameters).
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// With output_size ([D] or [N, C, D...] values, as LibTorch's), the
  /// output_padding is chosen to give that size (it must lie between the
  /// smallest size and that plus stride - 1); else options.output_padding().
  Tensor forward(const Tensor& input,
                 const std::optional<IntList>& output_size = std::nullopt);

  ConvTransposeOptions<D> options;
  Tensor weight;
  /// Undefined when options.bias() is false.
  Tensor bias;

 private:
  ExpandingArray<D> output_padding_for(const Tensor& input,
                                       const std::optional<IntList>& output_size) const;
};

class ConvTranspose1dImpl : public ConvTransposeNdImpl<1, ConvTranspose1dImpl> {
 public:
  using ConvTransposeNdImpl<1, ConvTranspose1dImpl>::ConvTransposeNdImpl;
  ConvTranspose1dImpl(int64_t in_channels,
                      int64_t out_channels,
                      ExpandingArray<1> kernel_size)
      : ConvTranspose1dImpl(
            ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
};
TANDEM_MODULE(ConvTranspose1d);

class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  using ConvTransposeNdImpl<2, ConvTranspose2dImpl>::ConvTransposeNdImpl;
  ConvTranspose2dImpl(int64_t in_channels,
                      int64_t out_channels,
                      ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(
            ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
};
TANDEM_MODULE(ConvTranspose2d);

}  // namespace tandem::nn
