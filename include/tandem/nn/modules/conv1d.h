// Conv1d: a 1-D convolution layer over [N, C, L] (or [C, L]) input, as
// LibTorch's torch::nn::Conv1d. It initialises like PyTorch: weight from
// kaiming_uniform_(a=sqrt(5)), bias from U(-1/sqrt(fan_in), 1/sqrt(fan_in))
// with fan_in = in_channels / groups * kernel_size.
//
//   tandem::nn::Conv1d conv(tandem::nn::Conv1dOptions(16, 32, 5).padding(2));
//   auto y = conv->forward(x);   // [N, 16, L] -> [N, 32, L]
//   std::cout << conv;           // Conv1d(16, 32, kernel_size=[5], stride=[1],
//                                //        padding=[2])
#pragma once

#include <cstdint>
#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/conv1d.h"

namespace tandem::nn {

class Conv1dImpl : public Cloneable<Conv1dImpl> {
 public:
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  explicit Conv1dImpl(const Conv1dOptions& options);

  /// Checks the options, creates weight [out, in / groups, k] and bias
  /// [out], and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's reset_parameters).
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  Conv1dOptions options;
  Tensor weight;
  /// Undefined when options.bias() is false.
  Tensor bias;
};
TANDEM_MODULE(Conv1d);

}  // namespace tandem::nn
