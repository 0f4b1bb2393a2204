// Options for MaxPool2d, AvgPool2d and their functional forms, with
// LibTorch's setters; the stride starts out equal to the kernel size.
//
//   tandem::nn::MaxPool2d pool(tandem::nn::MaxPool2dOptions(2));
//   tandem::nn::AvgPool2d avg(tandem::nn::AvgPool2dOptions(3).stride(1).padding(1));
//   auto p = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).ceil_mode(true));
#pragma once

#include <cstdint>
#include <optional>

#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

class MaxPool2dOptions {
 public:
  MaxPool2dOptions(ExpandingArray<2> kernel_size)  // implicit
      : kernel_size_(kernel_size), stride_(kernel_size) {}

  MaxPool2dOptions& kernel_size(ExpandingArray<2> value) {
    kernel_size_ = value;
    return *this;
  }
  MaxPool2dOptions& stride(ExpandingArray<2> value) {
    stride_ = value;
    return *this;
  }
  /// Implicit -inf padding on both sides (at most half the kernel size).
  MaxPool2dOptions& padding(ExpandingArray<2> value) {
    padding_ = value;
    return *this;
  }
  MaxPool2dOptions& dilation(ExpandingArray<2> value) {
    dilation_ = value;
    return *this;
  }
  /// Round the output size up, keeping a partial last window (default false).
  MaxPool2dOptions& ceil_mode(bool value) {
    ceil_mode_ = value;
    return *this;
  }

  const ExpandingArray<2>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<2>& stride() const noexcept { return stride_; }
  const ExpandingArray<2>& padding() const noexcept { return padding_; }
  const ExpandingArray<2>& dilation() const noexcept { return dilation_; }
  bool ceil_mode() const noexcept { return ceil_mode_; }

 private:
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  bool ceil_mode_ = false;
};

class AvgPool2dOptions {
 public:
  AvgPool2dOptions(ExpandingArray<2> kernel_size)  // implicit
      : kernel_size_(kernel_size), stride_(kernel_size) {}

  AvgPool2dOptions& kernel_size(ExpandingArray<2> value) {
    kernel_size_ = value;
    return *this;
  }
  AvgPool2dOptions& stride(ExpandingArray<2> value) {
    stride_ = value;
    return *this;
  }
  /// Implicit zero padding on both sides (at most half the kernel size).
  AvgPool2dOptions& padding(ExpandingArray<2> value) {
    padding_ = value;
    return *this;
  }
  AvgPool2dOptions& ceil_mode(bool value) {
    ceil_mode_ = value;
    return *this;
  }
  /// Whether padding cells count in a window's divisor (default true).
  AvgPool2dOptions& count_include_pad(bool value) {
    count_include_pad_ = value;
    return *this;
  }
  /// When set (non-zero), every window's sum is divided by this.
  AvgPool2dOptions& divisor_override(std::optional<int64_t> value) {
    divisor_override_ = value;
    return *this;
  }

  const ExpandingArray<2>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<2>& stride() const noexcept { return stride_; }
  const ExpandingArray<2>& padding() const noexcept { return padding_; }
  bool ceil_mode() const noexcept { return ceil_mode_; }
  bool count_include_pad() const noexcept { return count_include_pad_; }
  const std::optional<int64_t>& divisor_override() const noexcept {
    return divisor_override_;
  }

 private:
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_;
  ExpandingArray<2> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};

namespace functional {
/// The functional forms take the modules' options, as in LibTorch.
using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
}  // namespace functional

}  // namespace tandem::nn
