// Batch and layer normalisation, with torch.nn.functional's argument order
// and defaults, in float32 and float64.
//
//   // Training: normalise with the batch's statistics and update the
//   // running ones in place (momentum 0.1).
//   auto y = tandem::batch_norm(x, running_mean, running_var, gamma, beta,
//                               /*training=*/true);
//   // Evaluation: normalise with the running statistics.
//   auto z = tandem::batch_norm(x, running_mean, running_var, gamma, beta);
//   auto h = tandem::layer_norm(x, /*normalized_shape=*/{512}, w, b);
#pragma once

#include "tandem/core/tensor.h"

namespace tandem {

/// input [N, C, *] normalised per channel C: (x - mean) / sqrt(var + eps) *
/// weight + bias (weight, bias [C] or undefined). In training, mean and var
/// are the batch's (var biased), and running_mean / running_var ([C], when
/// defined) move towards them by `momentum`, running_var towards the
/// unbiased variance. In evaluation the running statistics are used and
/// must be defined.
Tensor batch_norm(const Tensor& input,
                  const Tensor& running_mean,
                  const Tensor& running_var,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  bool training = false,
                  double momentum = 0.1,
                  double eps = 1e-5);

/// Normalises over the last dims of input, which must equal
/// normalized_shape: (x - mean) / sqrt(var + eps) * weight + bias, with the
/// mean and biased variance of each such slice; weight and bias have
/// normalized_shape or are undefined.
Tensor layer_norm(const Tensor& input,
                  const IntList& normalized_shape,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  double eps = 1e-5);

}  // namespace tandem
