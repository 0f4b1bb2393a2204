// Options for Conv2d and functional::conv2d, with LibTorch's setters.
// Per-dimension values take one number for both dims or {height, width}.
//
//   tandem::nn::Conv2d conv(tandem::nn::Conv2dOptions(1, 32, 3).padding(1));
//   tandem::nn::Conv2d down(tandem::nn::Conv2dOptions(32, 64, {3, 1}).stride(2));
//   auto y = F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).groups(4));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

class Conv2dOptions {
 public:
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(kernel_size) {}

  Conv2dOptions& in_channels(int64_t value) {
    in_channels_ = value;
    return *this;
  }
  Conv2dOptions& out_channels(int64_t value) {
    out_channels_ = value;
    return *this;
  }
  Conv2dOptions& kernel_size(ExpandingArray<2> value) {
    kernel_size_ = value;
    return *this;
  }
  /// Default 1.
  Conv2dOptions& stride(ExpandingArray<2> value) {
    stride_ = value;
    return *this;
  }
  /// Zeros added on both sides of each spatial dim (default 0).
  Conv2dOptions& padding(ExpandingArray<2> value) {
    padding_ = value;
    return *this;
  }
  /// Spacing between kernel elements (default 1).
  Conv2dOptions& dilation(ExpandingArray<2> value) {
    dilation_ = value;
    return *this;
  }
  /// Channels split into this many independent groups (default 1); it must
  /// divide in_channels and out_channels.
  Conv2dOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }
  /// Whether the layer learns an additive bias (default true).
  Conv2dOptions& bias(bool value) {
    bias_ = value;
    return *this;
  }

  int64_t in_channels() const noexcept { return in_channels_; }
  int64_t out_channels() const noexcept { return out_channels_; }
  const ExpandingArray<2>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<2>& stride() const noexcept { return stride_; }
  const ExpandingArray<2>& padding() const noexcept { return padding_; }
  const ExpandingArray<2>& dilation() const noexcept { return dilation_; }
  int64_t groups() const noexcept { return groups_; }
  bool bias() const noexcept { return bias_; }

 private:
  int64_t in_channels_;
  int64_t out_channels_;
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> stride_ = 1;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};

namespace functional {

class Conv2dFuncOptions {
 public:
  /// [out_channels], or undefined for none (the default).
  Conv2dFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  Conv2dFuncOptions& stride(ExpandingArray<2> value) {
    stride_ = value;
    return *this;
  }
  Conv2dFuncOptions& padding(ExpandingArray<2> value) {
    padding_ = value;
    return *this;
  }
  Conv2dFuncOptions& dilation(ExpandingArray<2> value) {
    dilation_ = value;
    return *this;
  }
  Conv2dFuncOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }

  const Tensor& bias() const noexcept { return bias_; }
  const ExpandingArray<2>& stride() const noexcept { return stride_; }
  const ExpandingArray<2>& padding() const noexcept { return padding_; }
  const ExpandingArray<2>& dilation() const noexcept { return dilation_; }
  int64_t groups() const noexcept { return groups_; }

 private:
  Tensor bias_;
  ExpandingArray<2> stride_ = 1;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  int64_t groups_ = 1;
};

}  // namespace functional
}  // namespace tandem::nn
