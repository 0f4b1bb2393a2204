// MaxPool2d and AvgPool2d layers, as LibTorch's torch::nn::MaxPool2d and
// torch::nn::AvgPool2d: no parameters, the window in their options.
//
//   tandem::nn::MaxPool2d pool(2);                          // kernel 2, stride 2
//   tandem::nn::AvgPool2d avg(tandem::nn::AvgPool2dOptions(3).stride(1).padding(1));
//   auto y = pool->forward(x);                               // [N, C, 28, 28] -> [N, C,
//   14, 14] auto [values, indices] = pool->forward_with_indices(x);
#pragma once

#include <ostream>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/pooling.h"

namespace tandem::nn {

class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size)
      : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  explicit MaxPool2dImpl(const MaxPool2dOptions& options);
  /// Nothing to create; the window is checked when the layer runs.
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The pooled values and each maximum's index within its input plane.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);

  MaxPool2dOptions options;
};
TANDEM_MODULE(MaxPool2d);

class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size)
      : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  explicit AvgPool2dImpl(const AvgPool2dOptions& options);
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  AvgPool2dOptions options;
};
TANDEM_MODULE(AvgPool2d);

}  // namespace tandem::nn
