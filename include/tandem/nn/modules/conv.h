// Conv2d: a 2-D convolution layer over [N, C, H, W] (or [C, H, W]) input, as
// LibTorch's torch::nn::Conv2d. It initialises like PyTorch: weight from
// kaiming_uniform_(a=sqrt(5)), bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))
// with fan_in = in_channels / groups * kernel_h * kernel_w.
//
//   tandem::nn::Conv2d conv(1, 32, /*kernel_size=*/3);
//   tandem::nn::Conv2d same(tandem::nn::Conv2dOptions(32, 64, 3).padding(1));
//   auto y = same->forward(x);   // [N, 32, 28, 28] -> [N, 64, 28, 28]
//   std::cout << same;           // Conv2d(32, 64, kernel_size=[3, 3], stride=[1, 1],
//                                //        padding=[1, 1])
#pragma once

#include <cstdint>
#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/conv.h"

namespace tandem::nn {

class Conv2dImpl : public Cloneable<Conv2dImpl> {
 public:
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv2dImpl(const Conv2dOptions& options);

  /// Checks the options, creates weight [out, in / groups, kh, kw] and bias
  /// [out], and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's reset_parameters).
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  Conv2dOptions options;
  Tensor weight;
  /// Undefined when options.bias() is false.
  Tensor bias;
};
TANDEM_MODULE(Conv2d);

}  // namespace tandem::nn
