// MaxPool1d and AvgPool1d layers over [N, C, L] (or [C, L]) input, as
// LibTorch's torch::nn::MaxPool1d and torch::nn::AvgPool1d: no parameters,
// the window in their options.
//
//   tandem::nn::MaxPool1d pool(2);                  // [N, C, 10] -> [N, C, 5]
//   tandem::nn::AvgPool1d avg(tandem::nn::AvgPool1dOptions(3).stride(1).padding(1));
//   auto [values, indices] = pool->forward_with_indices(x);
#pragma once

#include <ostream>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/pooling1d.h"

namespace tandem::nn {

class MaxPool1dImpl : public Cloneable<MaxPool1dImpl> {
 public:
  explicit MaxPool1dImpl(ExpandingArray<1> kernel_size)
      : MaxPool1dImpl(MaxPool1dOptions(kernel_size)) {}
  explicit MaxPool1dImpl(const MaxPool1dOptions& options);
  /// Nothing to create; the window is checked when the layer runs.
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The pooled values and each maximum's index along L.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);

  MaxPool1dOptions options;
};
TANDEM_MODULE(MaxPool1d);

class AvgPool1dImpl : public Cloneable<AvgPool1dImpl> {
 public:
  explicit AvgPool1dImpl(ExpandingArray<1> kernel_size)
      : AvgPool1dImpl(AvgPool1dOptions(kernel_size)) {}
  explicit AvgPool1dImpl(const AvgPool1dOptions& options);
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  AvgPool1dOptions options;
};
TANDEM_MODULE(AvgPool1d);

}  // namespace tandem::nn
