// Private: what the loss ops share (ops/loss.cpp, ops/composite_loss.cpp):
// their argument checks and the reduction of per-element losses.
#pragma once

#include "tandem/core/tensor.h"
#include "tandem/ops/loss.h"

namespace tandem::detail {

/// Throws for kBatchMean, which only kl_div takes.
void check_reduction(const char* op, Reduction reduction);

/// The mean, the sum or the losses themselves; refuses kBatchMean.
Tensor reduce_loss(const char* op, const Tensor& losses, Reduction reduction);

/// A pointwise loss's operands: both defined, on one device, a floating
/// input and a target of the input's shape.
void check_pointwise_loss_args(const char* op, const Tensor& input, const Tensor& target);

}  // namespace tandem::detail
