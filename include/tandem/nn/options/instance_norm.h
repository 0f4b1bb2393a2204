// Options for InstanceNorm2d and functional::instance_norm, with LibTorch's
// setters and PyTorch's defaults: eps 1e-5, momentum 0.1, and (unlike
// BatchNorm) affine false and track_running_stats false.
//
//   tandem::nn::InstanceNorm2d in(tandem::nn::InstanceNormOptions(64).affine(true));
//   auto y = F::instance_norm(x, F::InstanceNormFuncOptions().weight(w).bias(b));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::nn {

class InstanceNormOptions {
 public:
  InstanceNormOptions(int64_t num_features)  // implicit
      : num_features_(num_features) {}

  /// The channel count C of the [N, C, ...] input.
  InstanceNormOptions& num_features(int64_t value) {
    num_features_ = value;
    return *this;
  }
  InstanceNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  /// How far each training batch moves the running statistics.
  InstanceNormOptions& momentum(double value) {
    momentum_ = value;
    return *this;
  }
  /// Whether the layer learns a per-channel scale and shift (default false).
  InstanceNormOptions& affine(bool value) {
    affine_ = value;
    return *this;
  }
  /// Whether the layer keeps running statistics, used in eval mode
  /// (default false: every forward normalises with the input's own).
  InstanceNormOptions& track_running_stats(bool value) {
    track_running_stats_ = value;
    return *this;
  }

  int64_t num_features() const noexcept { return num_features_; }
  double eps() const noexcept { return eps_; }
  double momentum() const noexcept { return momentum_; }
  bool affine() const noexcept { return affine_; }
  bool track_running_stats() const noexcept { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5;
  double momentum_ = 0.1;
  bool affine_ = false;
  bool track_running_stats_ = false;
};

namespace functional {

class InstanceNormFuncOptions {
 public:
  InstanceNormFuncOptions& running_mean(const Tensor& value) {
    running_mean_ = value;
    return *this;
  }
  InstanceNormFuncOptions& running_var(const Tensor& value) {
    running_var_ = value;
    return *this;
  }
  InstanceNormFuncOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  InstanceNormFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  /// Normalise with the input's statistics (default true) rather than the
  /// running ones.
  InstanceNormFuncOptions& use_input_stats(bool value) {
    use_input_stats_ = value;
    return *this;
  }
  InstanceNormFuncOptions& momentum(double value) {
    momentum_ = value;
    return *this;
  }
  InstanceNormFuncOptions& eps(double value) {
    eps_ = value;
    return *this;
  }

  const Tensor& running_mean() const noexcept { return running_mean_; }
  const Tensor& running_var() const noexcept { return running_var_; }
  const Tensor& weight() const noexcept { return weight_; }
  const Tensor& bias() const noexcept { return bias_; }
  bool use_input_stats() const noexcept { return use_input_stats_; }
  double momentum() const noexcept { return momentum_; }
  double eps() const noexcept { return eps_; }

 private:
  Tensor running_mean_;
  Tensor running_var_;
  Tensor weight_;
  Tensor bias_;
  bool use_input_stats_ = true;
  double momentum_ = 0.1;
  double eps_ = 1e-5;
};

}  // namespace functional
}  // namespace tandem::nn
