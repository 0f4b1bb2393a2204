// Options for the loss modules and functions, with LibTorch's setters.
//
//   tandem::nn::MSELoss mse(tandem::nn::MSELossOptions().reduction(tandem::kSum));
//   tandem::nn::CrossEntropyLoss ce(
//       tandem::nn::CrossEntropyLossOptions().ignore_index(0).label_smoothing(0.1));
//   auto l = F::nll_loss(logp, y, F::NLLLossFuncOptions().reduction(tandem::kNone));
//   tandem::nn::BCEWithLogitsLoss bce(
//       tandem::nn::BCEWithLogitsLossOptions().pos_weight(tandem::full({3}, 2.0)));
//   tandem::nn::KLDivLoss kl(
//       tandem::nn::KLDivLossOptions().reduction(tandem::kBatchMean));
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/ops/loss.h"

namespace tandem::nn {

class MSELossOptions {
 public:
  MSELossOptions(Reduction reduction = kMean)  // implicit
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

class BCELossOptions {
 public:
  /// Rescales each element's loss (broadcast to the input's shape).
  BCELossOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  BCELossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  const Tensor& weight() const noexcept { return weight_; }
  Reduction reduction() const noexcept { return reduction_; }

 private:
  Tensor weight_;
  Reduction reduction_ = kMean;
};

class BCEWithLogitsLossOptions {
 public:
  BCEWithLogitsLossOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  BCEWithLogitsLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// The weight of positive examples, usually one per class.
  BCEWithLogitsLossOptions& pos_weight(const Tensor& value) {
    pos_weight_ = value;
    return *this;
  }
  const Tensor& weight() const noexcept { return weight_; }
  Reduction reduction() const noexcept { return reduction_; }
  const Tensor& pos_weight() const noexcept { return pos_weight_; }

 private:
  Tensor weight_;
  Reduction reduction_ = kMean;
  Tensor pos_weight_;
};

class L1LossOptions {
 public:
  L1LossOptions(Reduction reduction = kMean)  // implicit
      : reduction_(reduction) {}
  L1LossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }

 private:
  Reduction reduction_;
};

class SmoothL1LossOptions {
 public:
  SmoothL1LossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// Where the loss turns from quadratic to linear (>= 0).
  SmoothL1LossOptions& beta(double value) {
    beta_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }
  double beta() const noexcept { return beta_; }

 private:
  Reduction reduction_ = kMean;
  double beta_ = 1.0;
};

class HuberLossOptions {
 public:
  HuberLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// Where the loss turns from quadratic to linear (> 0).
  HuberLossOptions& delta(double value) {
    delta_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }
  double delta() const noexcept { return delta_; }

 private:
  Reduction reduction_ = kMean;
  double delta_ = 1.0;
};

class KLDivLossOptions {
 public:
  /// kBatchMean is the true mean over the batch; kMean averages over every
  /// element, as PyTorch's default.
  KLDivLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// The target holds log-probabilities.
  KLDivLossOptions& log_target(bool value) {
    log_target_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }
  bool log_target() const noexcept { return log_target_; }

 private:
  Reduction reduction_ = kMean;
  bool log_target_ = false;
};

class CosineEmbeddingLossOptions {
 public:
  CosineEmbeddingLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// Dissimilar pairs cost cos - margin when positive (-1 to 1).
  CosineEmbeddingLossOptions& margin(double value) {
    margin_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }
  double margin() const noexcept { return margin_; }

 private:
  Reduction reduction_ = kMean;
  double margin_ = 0.0;
};

class MarginRankingLossOptions {
 public:
  MarginRankingLossOptions& reduction(Reduction value) {
    reduction_ = value;
    return *this;
  }
  /// How far the right input must lead to cost nothing.
  MarginRankingLossOptions& margin(double value) {
    margin_ = value;
    return *this;
  }
  Reduction reduction() const noexcept { return reduction_; }
  double margin() const noexcept { return margin_; }

 private:
  Reduction reduction_ = kMean;
  double margin_ = 0.0;
};

namespace functional {

using MSELossFuncOptions = MSELossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;

}  // namespace functional
}  // namespace tandem::nn
