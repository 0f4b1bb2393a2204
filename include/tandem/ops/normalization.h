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
//   auto g = tandem::group_norm(x, /*num_groups=*/8, w, b);
//   auto i = tandem::instance_norm(x);   // each (sample, channel) plane
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

/// input [N, C, *] with its C channels split into num_groups groups (which
/// must divide C): each sample's group is normalised with its own mean and
/// biased variance, then scaled by weight [C] and shifted by bias [C] when
/// they are defined. Computed as layer_norm over [N, num_groups, rest].
Tensor group_norm(const Tensor& input,
                  int64_t num_groups,
                  const Tensor& weight = {},
                  const Tensor& bias = {},
                  double eps = 1e-5);

/// input [N, C, *] normalised per sample and channel, as torch's
/// instance_norm: batch_norm over the input seen as [1, N * C, *]. With
/// use_input_stats each plane's own statistics are used and running_mean /
/// running_var ([C], when defined) move towards their mean over the batch;
/// otherwise the running statistics are used and must be defined.
Tensor instance_norm(const Tensor& input,
                     const Tensor& running_mean = {},
                     const Tensor& running_var = {},
                     const Tensor& weight = {},
                     const Tensor& bias = {},
                     bool use_input_stats = true,
                     double momentum = 0.1,
                     double eps = 1e-5);

}  // namespace tandem
