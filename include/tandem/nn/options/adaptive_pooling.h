// Options for AdaptiveAvgPool2d, AdaptiveMaxPool2d and their functional
// forms: the output size (Ho, Wo), one number for both.
//
//   tandem::nn::AdaptiveAvgPool2d head(1);           // global average pooling
//   auto p = F::adaptive_max_pool2d(x, F::AdaptiveMaxPool2dFuncOptions({5, 7}));
#pragma once

#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

/// One class for both poolings, as LibTorch's AdaptiveMaxPoolOptions /
/// AdaptiveAvgPoolOptions templates.
template <typename Tag>
class AdaptivePool2dOptions {
 public:
  AdaptivePool2dOptions(ExpandingArray<2> output_size)  // implicit
      : output_size_(output_size) {}
  AdaptivePool2dOptions& output_size(ExpandingArray<2> value) {
    output_size_ = value;
    return *this;
  }
  const ExpandingArray<2>& output_size() const noexcept { return output_size_; }

 private:
  ExpandingArray<2> output_size_;
};

struct AdaptiveAvgPoolTag;
struct AdaptiveMaxPoolTag;
using AdaptiveAvgPool2dOptions = AdaptivePool2dOptions<AdaptiveAvgPoolTag>;
using AdaptiveMaxPool2dOptions = AdaptivePool2dOptions<AdaptiveMaxPoolTag>;

namespace functional {
using AdaptiveAvgPool2dFuncOptions = AdaptiveAvgPool2dOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptiveMaxPool2dOptions;
}  // namespace functional

}  // namespace tandem::nn
