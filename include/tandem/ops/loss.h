// Loss functions with PyTorch's reductions.
//
//   auto loss = tandem::cross_entropy(logits, targets);          // mean
//   auto l2 = tandem::mse_loss(pred, y, tandem::Reduction::Sum);
//   auto b = tandem::binary_cross_entropy_with_logits(logits, labels, {}, pos_weight);
//   auto kl = tandem::kl_div(log_q, p, tandem::kBatchMean);
//
// Pointwise losses take a target of the input's shape (tandem refuses the
// broadcast that PyTorch only warns about) and give a gradient to both.
#pragma once

#include "tandem/core/tensor.h"

namespace tandem {

/// BatchMean (the sum divided by the batch size, dim 0) is kl_div's only.
enum class Reduction { None, Mean, Sum, BatchMean };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
inline constexpr Reduction kBatchMean = Reduction::BatchMean;

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

/// -weight * (target * log(input) + (1 - target) * log(1 - input)), the logs
/// clamped at -100 as PyTorch's; input holds probabilities in [0, 1] (checked
/// on CPU); weight, if defined, broadcasts to the input's shape.
Tensor binary_cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const Tensor& weight = Tensor(),
                            Reduction reduction = kMean);
/// sigmoid + binary_cross_entropy in one stable formula:
///   weight * ((1 - target) * x + (1 + (pos_weight - 1) * target) * softplus(-x))
/// which never exponentiates a large number. pos_weight (broadcast to the
/// input, usually [classes]) weighs the positive examples.
Tensor binary_cross_entropy_with_logits(const Tensor& input,
                                        const Tensor& target,
                                        const Tensor& weight = Tensor(),
                                        const Tensor& pos_weight = Tensor(),
                                        Reduction reduction = kMean);
/// |input - target|
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
/// 0.5 d^2 / beta where d = |input - target| < beta, else d - 0.5 beta
/// (beta >= 0; 0 gives l1_loss).
Tensor smooth_l1_loss(const Tensor& input,
                      const Tensor& target,
                      Reduction reduction = kMean,
                      double beta = 1.0);
/// 0.5 d^2 where d < delta, else delta (d - 0.5 delta) (delta > 0).
Tensor huber_loss(const Tensor& input,
                  const Tensor& target,
                  Reduction reduction = kMean,
                  double delta = 1.0);
/// Kullback-Leibler divergence of input (log-probabilities) from target
/// (probabilities, or log-probabilities when log_target):
/// target * (log(target) - input), 0 where target is 0. kBatchMean divides
/// the sum by input.size(0), the mathematically right mean.
Tensor kl_div(const Tensor& input,
              const Tensor& target,
              Reduction reduction = kMean,
              bool log_target = false);
/// input1, input2: [N, D] (or [D]); target [N] (or []) of 1 and -1:
/// 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where -1.
Tensor cosine_embedding_loss(const Tensor& input1,
                             const Tensor& input2,
                             const Tensor& target,
                             double margin = 0.0,
                             Reduction reduction = kMean);
/// max(0, -target * (input1 - input2) + margin), all three of one shape.
Tensor margin_ranking_loss(const Tensor& input1,
                           const Tensor& input2,
                           const Tensor& target,
                           double margin = 0.0,
                           Reduction reduction = kMean);

}  // namespace tandem
