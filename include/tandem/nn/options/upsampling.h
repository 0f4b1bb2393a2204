// Options for Upsample and functional::interpolate, with LibTorch's setters:
// exactly one of size and scale_factor, mode kNearest (default) or
// kBilinear, align_corners only for kBilinear (default false).
//
//   tandem::nn::Upsample up(tandem::nn::UpsampleOptions()
//                               .scale_factor({2, 2})
//                               .mode(tandem::kBilinear)
//                               .align_corners(false));
//   auto y = F::interpolate(x, F::InterpolateFuncOptions().size({{32, 48}}));
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "tandem/ops/interpolate.h"

namespace tandem::nn {

class UpsampleOptions {
 public:
  /// The output's spatial size {H, W} (one value for both).
  UpsampleOptions& size(std::optional<std::vector<int64_t>> value) {
    size_ = std::move(value);
    return *this;
  }
  /// The factor each spatial size is multiplied by (rounded down); one
  /// value for both dims.
  UpsampleOptions& scale_factor(std::optional<std::vector<double>> value) {
    scale_factor_ = std::move(value);
    return *this;
  }
  UpsampleOptions& mode(InterpolateMode value) {
    mode_ = value;
    return *this;
  }
  /// Bilinear only: whether the corner cells of input and output align
  /// (PyTorch's default false).
  UpsampleOptions& align_corners(std::optional<bool> value) {
    align_corners_ = value;
    return *this;
  }

  const std::optional<std::vector<int64_t>>& size() const noexcept { return size_; }
  const std::optional<std::vector<double>>& scale_factor() const noexcept {
    return scale_factor_;
  }
  InterpolateMode mode() const noexcept { return mode_; }
  const std::optional<bool>& align_corners() const noexcept { return align_corners_; }

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = kNearest;
  std::optional<bool> align_corners_;
};

namespace functional {

class InterpolateFuncOptions {
 public:
  InterpolateFuncOptions& size(std::optional<std::vector<int64_t>> value) {
    size_ = std::move(value);
    return *this;
  }
  InterpolateFuncOptions& scale_factor(std::optional<std::vector<double>> value) {
    scale_factor_ = std::move(value);
    return *this;
  }
  InterpolateFuncOptions& mode(InterpolateMode value) {
    mode_ = value;
    return *this;
  }
  InterpolateFuncOptions& align_corners(std::optional<bool> value) {
    align_corners_ = value;
    return *this;
  }
  /// With a scale_factor: true computes the output size and then samples
  /// as if that size had been given; otherwise (default) the kernel uses
  /// 1 / scale_factor as its step, as PyTorch.
  InterpolateFuncOptions& recompute_scale_factor(std::optional<bool> value) {
    recompute_scale_factor_ = value;
    return *this;
  }

  const std::optional<std::vector<int64_t>>& size() const noexcept { return size_; }
  const std::optional<std::vector<double>>& scale_factor() const noexcept {
    return scale_factor_;
  }
  InterpolateMode mode() const noexcept { return mode_; }
  const std::optional<bool>& align_corners() const noexcept { return align_corners_; }
  const std::optional<bool>& recompute_scale_factor() const noexcept {
    return recompute_scale_factor_;
  }

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = kNearest;
  std::optional<bool> align_corners_;
  std::optional<bool> recompute_scale_factor_;
};

}  // namespace functional
}  // namespace tandem::nn
