// Options for BatchNorm1d / BatchNorm2d and functional::batch_norm, with
// LibTorch's setters and PyTorch's defaults (eps 1e-5, momentum 0.1).
//
//   tandem::nn::BatchNorm2d bn(tandem::nn::BatchNormOptions(32).momentum(0.01));
//   tandem::nn::BatchNorm1d plain(tandem::nn::BatchNormOptions(64).affine(false));
//   auto y = F::batch_norm(x, mean, var,
//                          F::BatchNormFuncOptions().weight(g).bias(b).training(true));
#pragma once

#include <cstdint>
#include <optional>

#include "tandem/core/tensor.h"

namespace tandem::nn {

class BatchNormOptions {
 public:
  BatchNormOptions(int64_t num_features)  // implicit
      : num_features_(num_features) {}

  /// The channel count C of the [N, C, ...] input.
  BatchNormOptions& num_features(int64_t value) {
    num_features_ = value;
    return *this;
  }
  /// Added to the variance before the square root.
  BatchNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  /// How far each training batch moves the running statistics; nullopt
  /// means a cumulative average over all batches so far.
  BatchNormOptions& momentum(std::optional<double> value) {
    momentum_ = value;
    return *this;
  }
  /// Whether the layer learns a per-channel scale (weight) and shift (bias).
  BatchNormOptions& affine(bool value) {
    affine_ = value;
    return *this;
  }
  /// Whether the layer keeps running statistics for evaluation; without
  /// them it normalises with each batch's statistics in both modes.
  BatchNormOptions& track_running_stats(bool value) {
    track_running_stats_ = value;
    return *this;
  }

  int64_t num_features() const noexcept { return num_features_; }
  double eps() const noexcept { return eps_; }
  const std::optional<double>& momentum() const noexcept { return momentum_; }
  bool affine() const noexcept { return affine_; }
  bool track_running_stats() const noexcept { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};

namespace functional {

class BatchNormFuncOptions {
 public:
  /// Per-channel scale [C] (undefined: 1).
  BatchNormFuncOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  /// Per-channel shift [C] (undefined: 0).
  BatchNormFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  /// Normalise with the batch's statistics and update the running ones
  /// (default false: use the running statistics).
  BatchNormFuncOptions& training(bool value) {
    training_ = value;
    return *this;
  }
  BatchNormFuncOptions& momentum(double value) {
    momentum_ = value;
    return *this;
  }
  BatchNormFuncOptions& eps(double value) {
    eps_ = value;
    return *this;
  }

  const Tensor& weight() const noexcept { return weight_; }
  const Tensor& bias() const noexcept { return bias_; }
  bool training() const noexcept { return training_; }
  double momentum() const noexcept { return momentum_; }
  double eps() const noexcept { return eps_; }

 private:
  Tensor weight_;
  Tensor bias_;
  bool training_ = false;
  double momentum_ = 0.1;
  double eps_ = 1e-5;
};

}  // namespace functional
}  // namespace tandem::nn
