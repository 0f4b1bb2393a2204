// Loss functions with PyTorch's reductions.
//
//   auto loss = tandem::cross_entropy(logits, targets);          // mean
//   auto l2 = tandem::mse_loss(pred, y, tandem::Reduction::Sum);
#pragma once

#include "tandem/core/tensor.h"

namespace tandem {

enum class Reduction { None, Mean, Sum };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
/// input: [N, C] log-probabilities (or [C]); target: [N] int64 class indices.
/// Targets equal to ignore_index contribute nothing (and do not count in
/// the mean); weight, if defined, is [C].
Tensor nll_loss(const Tensor& input,
                const Tensor& target,
                const Tensor& weight = Tensor(),
                Reduction reduction = kMean,
                int64_t ignore_index = -100);
/// log_softmax over dim 1 followed by nll_loss.
Tensor cross_entropy(const Tensor& input,
                     const Tensor& target,
                     const Tensor& weight = Tensor(),
                     Reduction reduction = kMean,
                     int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

}  // namespace tandem
