// Options for the loss modules and functions, with LibTorch's setters.
//
//   tandem::nn::MSELoss mse(tandem::nn::MSELossOptions().reduction(tandem::kSum));
//   tandem::nn::CrossEntropyLoss ce(
//       tandem::nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1));
//   auto l = F::nll_loss(logp, y, F::NLLLossFuncOptions().reduction(tandem::kNone));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/loss.h"

namespace tandem::nn {

class MSELossOptions {
 public:
  MSELossOptions(Reduction reduction = kMean)  // NOLINT(google-explicit-constructor)
      : reduction_(reduction) {}
  MSELossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }

 private:
  Reduction reduction_;
};

class NLLLossOptions {
 public:
  /// Per-class weights [C] (undefined: all 1).
  NLLLossOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  /// Targets with this class index contribute nothing.
  NLLLossOptions& ignore_index(int64_t value) {
    ignore_index_ = value;
    return *this;
  }
  NLLLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  const Tensor& weight() const noexcept { return weight_; }
  int64_t ignore_index() const noexcept { return ignore_index_; }
  Reduction reduction() const noexcept { return reduction_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  Reduction reduction_ = kMean;
};

class CrossEntropyLossOptions {
 public:
  CrossEntropyLossOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  CrossEntropyLossOptions& ignore_index(int64_t value) {
    ignore_index_ = value;
    return *this;
  }
  CrossEntropyLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// Mixes the one-hot target with the uniform distribution (0 to 1).
  CrossEntropyLossOptions& label_smoothing(double value) {
    label_smoothing_ = value;
    return *this;
  }
  const Tensor& weight() const noexcept { return weight_; }
  int64_t ignore_index() const noexcept { return ignore_index_; }
  Reduction reduction() const noexcept { return reduction_; }
  double label_smoothing() const noexcept { return label_smoothing_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  Reduction reduction_ = kMean;
  double label_smoothing_ = 0.0;
};

namespace functional {

using MSELossFuncOptions = MSELossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;

}  // namespace functional
}  // namespace tandem::nn
