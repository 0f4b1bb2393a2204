// Options for Conv1d and functional::conv1d, with LibTorch's setters and
// defaults (stride 1, padding 0, dilation 1, groups 1, bias true).
//
//   tandem::nn::Conv1d conv(tandem::nn::Conv1dOptions(16, 32, 5).padding(2));
//   auto y = F::conv1d(x, w, F::Conv1dFuncOptions().bias(b).stride(2));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

class Conv1dOptions {
 public:
  Conv1dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(kernel_size) {}

  Conv1dOptions& in_channels(int64_t value) {
    in_channels_ = value;
    return *this;
  }
  Conv1dOptions& out_channels(int64_t value) {
    out_channels_ = value;
    return *this;
  }
  Conv1dOptions& kernel_size(ExpandingArray<1> value) {
    kernel_size_ = value;
    return *this;
  }
  Conv1dOptions& stride(ExpandingArray<1> value) {
    stride_ = value;
    return *this;
  }
  /// Zeros added at both ends (default 0).
  Conv1dOptions& padding(ExpandingArray<1> value) {
    padding_ = value;
    return *this;
  }
  Conv1dOptions& dilation(ExpandingArray<1> value) {
    dilation_ = value;
    return *this;
  }
  /// It must divide in_channels and out_channels.
  Conv1dOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }
  Conv1dOptions& bias(bool value) {
    bias_ = value;
    return *this;
  }

  int64_t in_channels() const noexcept { return in_channels_; }
  int64_t out_channels() const noexcept { return out_channels_; }
  const ExpandingArray<1>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<1>& stride() const noexcept { return stride_; }
  const ExpandingArray<1>& padding() const noexcept { return padding_; }
  const ExpandingArray<1>& dilation() const noexcept { return dilation_; }
  int64_t groups() const noexcept { return groups_; }
  bool bias() const noexcept { return bias_; }

 private:
  int64_t in_channels_;
  int64_t out_channels_;
  ExpandingArray<1> kernel_size_;
  ExpandingArray<1> stride_ = 1;
  ExpandingArray<1> padding_ = 0;
  ExpandingArray<1> dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};

namespace functional {

class Conv1dFuncOptions {
 public:
  /// [out_channels], or undefined for none (the default).
  Conv1dFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  Conv1dFuncOptions& stride(ExpandingArray<1> value) {
    stride_ = value;
    return *this;
  }
  Conv1dFuncOptions& padding(ExpandingArray<1> value) {
    padding_ = value;
    return *this;
  }
  Conv1dFuncOptions& dilation(ExpandingArray<1> value) {
    dilation_ = value;
    return *this;
  }
  Conv1dFuncOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }

  const Tensor& bias() const noexcept { return bias_; }
  const ExpandingArray<1>& stride() const noexcept { return stride_; }
  const ExpandingArray<1>& padding() const noexcept { return padding_; }
  const ExpandingArray<1>& dilation() const noexcept { return dilation_; }
  int64_t groups() const noexcept { return groups_; }

 private:
  Tensor bias_;
  ExpandingArray<1> stride_ = 1;
  ExpandingArray<1> padding_ = 0;
  ExpandingArray<1> dilation_ = 1;
  int64_t groups_ = 1;
};

}  // namespace functional
}  // namespace tandem::nn
