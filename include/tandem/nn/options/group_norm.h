// Options for GroupNorm and functional::group_norm, with LibTorch's setters
// and PyTorch's defaults (eps 1e-5, affine true).
//
//   tandem::nn::GroupNorm gn(tandem::nn::GroupNormOptions(/*num_groups=*/4, 32));
//   auto y = F::group_norm(x, F::GroupNormFuncOptions(4).weight(w).bias(b));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::nn {

class GroupNormOptions {
 public:
  GroupNormOptions(int64_t num_groups, int64_t num_channels)
      : num_groups_(num_groups), num_channels_(num_channels) {}

  /// The number of groups the channels are split into; it divides them.
  GroupNormOptions& num_groups(int64_t value) {
    num_groups_ = value;
    return *this;
  }
  /// The channel count C of the [N, C, ...] input.
  GroupNormOptions& num_channels(int64_t value) {
    num_channels_ = value;
    return *this;
  }
  GroupNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  /// Whether the layer learns a per-channel scale and shift (default true).
  GroupNormOptions& affine(bool value) {
    affine_ = value;
    return *this;
  }

  int64_t num_groups() const noexcept { return num_groups_; }
  int64_t num_channels() const noexcept { return num_channels_; }
  double eps() const noexcept { return eps_; }
  bool affine() const noexcept { return affine_; }

 private:
  int64_t num_groups_;
  int64_t num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};

namespace functional {

class GroupNormFuncOptions {
 public:
  GroupNormFuncOptions(int64_t num_groups)  // implicit
      : num_groups_(num_groups) {}
  GroupNormFuncOptions& num_groups(int64_t value) {
    num_groups_ = value;
    return *this;
  }
  GroupNormFuncOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  GroupNormFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  GroupNormFuncOptions& eps(double value) {
    eps_ = value;
    return *this;
  }

  int64_t num_groups() const noexcept { return num_groups_; }
  const Tensor& weight() const noexcept { return weight_; }
  const Tensor& bias() const noexcept { return bias_; }
  double eps() const noexcept { return eps_; }

 private:
  int64_t num_groups_;
  Tensor weight_;
  Tensor bias_;
  double eps_ = 1e-5;
};

}  // namespace functional
}  // namespace tandem::nn
