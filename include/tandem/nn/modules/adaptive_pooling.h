// AdaptiveAvgPool2d and AdaptiveMaxPool2d layers over [N, C, H, W] (or
// [C, H, W]) input, as LibTorch's: pool each plane to a fixed output size,
// whatever the input's.
//
//   tandem::nn::AdaptiveAvgPool2d head(1);          // [N, C, H, W] -> [N, C, 1, 1]
//   tandem::nn::AdaptiveMaxPool2d pool({5, 7});
//   auto [values, indices] = pool->forward_with_indices(x);
//   std::cout << head;                              // AdaptiveAvgPool2d(output_size=[1,
//   1])
#pragma once

#include <ostream>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/adaptive_pooling.h"

namespace tandem::nn {

class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray<2> output_size)
      : AdaptiveAvgPool2dImpl(AdaptiveAvgPool2dOptions(output_size)) {}
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options);
  /// Checks that the output size is positive.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  AdaptiveAvgPool2dOptions options;
};
TANDEM_MODULE(AdaptiveAvgPool2d);

class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  explicit AdaptiveMaxPool2dImpl(ExpandingArray<2> output_size)
      : AdaptiveMaxPool2dImpl(AdaptiveMaxPool2dOptions(output_size)) {}
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options);
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// The pooled values and each maximum's index within its input plane
  /// (h * W + w), as LibTorch's return_indices form.
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);

  AdaptiveMaxPool2dOptions options;
};
TANDEM_MODULE(AdaptiveMaxPool2d);

}  // namespace tandem::nn
