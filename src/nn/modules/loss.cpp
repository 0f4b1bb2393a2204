// Loss modules: forwards to the loss ops with the module's options.
#include "tandem/nn/modules/loss.h"

#include "tandem/core/error.h"
#include "tandem/ops/loss.h"

namespace tandem::nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options.reduction());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : options(options) { reset(); }

void NLLLossImpl::reset() { weight = register_buffer("weight", options.weight()); }

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, weight, options.reduction(), options.ignore_index());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : options(options) {
  reset();
}

void CrossEntropyLossImpl::reset() {
  TANDEM_CHECK(options.label_smoothing() >= 0 && options.label_smoothing() <= 1,
               "CrossEntropyLoss: label_smoothing must be between 0 and 1, got ",
               options.label_smoothing());
  weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input,
                       target,
                       weight,
                       options.reduction(),
                       options.ignore_index(),
                       options.label_smoothing());
}

BCELossImpl::BCELossImpl(const BCELossOptions& options) : options(options) { reset(); }

void BCELossImpl::reset() { weight = register_buffer("weight", options.weight()); }

Tensor BCELossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy(input, target, weight, options.reduction());
}

BCEWithLogitsLossImpl::BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options)
    : options(options) {
  reset();
}

void BCEWithLogitsLossImpl::reset() {
  weight = register_buffer("weight", options.weight());
  pos_weight = register_buffer("pos_weight", options.pos_weight());
}

Tensor BCEWithLogitsLossImpl::forward(const Tensor& input, const Tensor& target) {
  return binary_cross_entropy_with_logits(
      input, target, weight, pos_weight, options.reduction());
}

Tensor L1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return l1_loss(input, target, options.reduction());
}

SmoothL1LossImpl::SmoothL1LossImpl(const SmoothL1LossOptions& options)
    : options(options) {
  reset();
}

void SmoothL1LossImpl::reset() {
  TANDEM_CHECK(options.beta() >= 0,
               "SmoothL1Loss: beta must be non-negative, got ",
               options.beta());
}

Tensor SmoothL1LossImpl::forward(const Tensor& input, const Tensor& target) {
  return smooth_l1_loss(input, target, options.reduction(), options.beta());
}

HuberLossImpl::HuberLossImpl(const HuberLossOptions& options) : options(options) {
  reset();
}

void HuberLossImpl::reset() {
  TANDEM_CHECK(
      options.delta() > 0, "HuberLoss: delta must be positive, got ", options.delta());
}

Tensor HuberLossImpl::forward(const Tensor& input, const Tensor& target) {
  return huber_loss(input, target, options.reduction(), options.delta());
}

Tensor KLDivLossImpl::forward(const Tensor& input, const Tensor& target) {
  return kl_div(input, target, options.reduction(), options.log_target());
}

Tensor CosineEmbeddingLossImpl::forward(const Tensor& input1,
                                        const Tensor& input2,
                                        const Tensor& target) {
  return cosine_embedding_loss(
      input1, input2, target, options.margin(), options.reduction());
}

Tensor MarginRankingLossImpl::forward(const Tensor& input1,
                                      const Tensor& input2,
                                      const Tensor& target) {
  return margin_ranking_loss(
      input1, input2, target, options.margin(), options.reduction());
}

}  // namespace tandem::nn
