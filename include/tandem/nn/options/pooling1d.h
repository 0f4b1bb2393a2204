// Options for MaxPool1d, AvgPool1d and their functional forms, with
// LibTorch's setters; the stride starts out equal to the kernel size.
//
//   tandem::nn::MaxPool1d pool(tandem::nn::MaxPool1dOptions(3).stride(2));
//   auto p = F::avg_pool1d(x, F::AvgPool1dFuncOptions(2).ceil_mode(true));
#pragma once

#include <cstdint>

#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

class MaxPool1dOptions {
 public:
  MaxPool1dOptions(ExpandingArray<1> kernel_size)  // implicit
      : kernel_size_(kernel_size), stride_(kernel_size) {}

  MaxPool1dOptions& kernel_size(ExpandingArray<1> value) {
    kernel_size_ = value;
    return *this;
  }
  MaxPool1dOptions& stride(ExpandingArray<1> value) {
    stride_ = value;
    return *this;
  }
  /// Implicit -inf padding at both ends (at most half the kernel size).
  MaxPool1dOptions& padding(ExpandingArray<1> value) {
    padding_ = value;
    return *this;
  }
  MaxPool1dOptions& dilation(ExpandingArray<1> value) {
    dilation_ = value;
    return *this;
  }
  MaxPool1dOptions& ceil_mode(bool value) {
    ceil_mode_ = value;
    return *this;
  }

  const ExpandingArray<1>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<1>& stride() const noexcept { return stride_; }
  const ExpandingArray<1>& padding() const noexcept { return padding_; }
  const ExpandingArray<1>& dilation() const noexcept { return dilation_; }
  bool ceil_mode() const noexcept { return ceil_mode_; }

 private:
  ExpandingArray<1> kernel_size_;
  ExpandingArray<1> stride_;
  ExpandingArray<1> padding_ = 0;
  ExpandingArray<1> dilation_ = 1;
  bool ceil_mode_ = false;
};

class AvgPool1dOptions {
 public:
  AvgPool1dOptions(ExpandingArray<1> kernel_size)  // implicit
      : kernel_size_(kernel_size), stride_(kernel_size) {}

  AvgPool1dOptions& kernel_size(ExpandingArray<1> value) {
    kernel_size_ = value;
    return *this;
  }
  AvgPool1dOptions& stride(ExpandingArray<1> value) {
    stride_ = value;
    return *this;
  }
  /// Implicit zero padding at both ends (at most half the kernel size).
  AvgPool1dOptions& padding(ExpandingArray<1> value) {
    padding_ = value;
    return *this;
  }
  AvgPool1dOptions& ceil_mode(bool value) {
    ceil_mode_ = value;
    return *this;
  }
  /// Whether padding cells count in a window's divisor (default true).
  AvgPool1dOptions& count_include_pad(bool value) {
    count_include_pad_ = value;
    return *this;
  }

  const ExpandingArray<1>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<1>& stride() const noexcept { return stride_; }
  const ExpandingArray<1>& padding() const noexcept { return padding_; }
  bool ceil_mode() const noexcept { return ceil_mode_; }
  bool count_include_pad() const noexcept { return count_include_pad_; }

 private:
  ExpandingArray<1> kernel_size_;
  ExpandingArray<1> stride_;
  ExpandingArray<1> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
};

namespace functional {
using MaxPool1dFuncOptions = MaxPool1dOptions;
using AvgPool1dFuncOptions = AvgPool1dOptions;
}  // namespace functional

}  // namespace tandem::nn
