// Options for ConvTranspose1d / ConvTranspose2d and their functional forms,
// with LibTorch's setters (ConvTransposeOptions<D>, ConvTransposeFuncOptions<D>).
// Per-dimension values take one number for all dims or one per dim.
//
//   tandem::nn::ConvTranspose2d up(
//       tandem::nn::ConvTranspose2dOptions(256, 128, 4).stride(2).padding(1));
//   auto y = F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().stride(2));
#pragma once

#include <cstddef>
#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/expanding_array.h"

namespace tandem::nn {

template <size_t D>
class ConvTransposeOptions {
 public:
  ConvTransposeOptions(int64_t in_channels,
                       int64_t out_channels,
                       ExpandingArray<D> kernel_size)
      : in_channels_(in_channels),
        out_channels_(out_channels),
        kernel_size_(kernel_size) {}

  ConvTransposeOptions& in_channels(int64_t value) {
    in_channels_ = value;
    return *this;
  }
  ConvTransposeOptions& out_channels(int64_t value) {
    out_channels_ = value;
    return *this;
  }
  ConvTransposeOptions& kernel_size(ExpandingArray<D> value) {
    kernel_size_ = value;
    return *this;
  }
  /// Default 1.
  ConvTransposeOptions& stride(ExpandingArray<D> value) {
    stride_ = value;
    return *this;
  }
  /// dilation * (kernel_size - 1) - padding zeros on both sides of the
  /// input, as PyTorch (default 0).
  ConvTransposeOptions& padding(ExpandingArray<D> value) {
    padding_ = value;
    return *this;
  }
  /// Extra size at the end of each output dim (default 0); must be smaller
  /// than stride or dilation.
  ConvTransposeOptions& output_padding(ExpandingArray<D> value) {
    output_padding_ = value;
    return *this;
  }
  /// Channels split into this many independent groups (default 1); it must
  /// divide in_channels and out_channels.
  ConvTransposeOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }
  /// Whether the layer learns an additive bias (default true).
  ConvTransposeOptions& bias(bool value) {
    bias_ = value;
    return *this;
  }
  /// Spacing between kernel elements (default 1).
  ConvTransposeOptions& dilation(ExpandingArray<D> value) {
    dilation_ = value;
    return *this;
  }

  int64_t in_channels() const noexcept { return in_channels_; }
  int64_t out_channels() const noexcept { return out_channels_; }
  const ExpandingArray<D>& kernel_size() const noexcept { return kernel_size_; }
  const ExpandingArray<D>& stride() const noexcept { return stride_; }
  const ExpandingArray<D>& padding() const noexcept { return padding_; }
  const ExpandingArray<D>& output_padding() const noexcept { return output_padding_; }
  int64_t groups() const noexcept { return groups_; }
  bool bias() const noexcept { return bias_; }
  const ExpandingArray<D>& dilation() const noexcept { return dilation_; }

 private:
  int64_t in_channels_;
  int64_t out_channels_;
  ExpandingArray<D> kernel_size_;
  ExpandingArray<D> stride_ = 1;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> output_padding_ = 0;
  int64_t groups_ = 1;
  bool bias_ = true;
  ExpandingArray<D> dilation_ = 1;
};

using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;

namespace functional {

template <size_t D>
class ConvTransposeFuncOptions {
 public:
  /// [out_channels], or undefined for none (the default).
  ConvTransposeFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  ConvTransposeFuncOptions& stride(ExpandingArray<D> value) {
    stride_ = value;
    return *this;
  }
  ConvTransposeFuncOptions& padding(ExpandingArray<D> value) {
    padding_ = value;
    return *this;
  }
  ConvTransposeFuncOptions& output_padding(ExpandingArray<D> value) {
    output_padding_ = value;
    return *this;
  }
  ConvTransposeFuncOptions& groups(int64_t value) {
    groups_ = value;
    return *this;
  }
  ConvTransposeFuncOptions& dilation(ExpandingArray<D> value) {
    dilation_ = value;
    return *this;
  }

  const Tensor& bias() const noexcept { return bias_; }
  const ExpandingArray<D>& stride() const noexcept { return stride_; }
  const ExpandingArray<D>& padding() const noexcept { return padding_; }
  const ExpandingArray<D>& output_padding() const noexcept { return output_padding_; }
  int64_t groups() const noexcept { return groups_; }
  const ExpandingArray<D>& dilation() const noexcept { return dilation_; }

 private:
  Tensor bias_;
  ExpandingArray<D> stride_ = 1;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> output_padding_ = 0;
  int64_t groups_ = 1;
  ExpandingArray<D> dilation_ = 1;
};

using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;

}  // namespace functional
}  // namespace tandem::nn
