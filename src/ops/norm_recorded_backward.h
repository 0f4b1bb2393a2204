// Private: batch_norm's and layer_norm's backward written with
// differentiable ops, for create_graph. The fast path is the backend's
// kernels; this one is recorded, so the gradients of a normalisation can be
// differentiated again (MAML-style meta-gradients, gradient penalties).
#pragma once

#include "tandem/graph/node.h"

namespace tandem::detail {

/// Which of a normalisation's three gradients {input, weight, bias} to give.
struct NormGradients {
  bool input = false, weight = false, bias = false;
};

/// batch_norm over channel dim 1. Training: the batch statistics are
/// recomputed from x (with its history), so their dependence on x is part
/// of the derivative. Evaluation: `mean` and `invstd` (from the running
/// statistics) are constants.
autograd::tensor_list recorded_batch_norm_backward(const Tensor& g,
                                                   const Tensor& x,
                                                   const Tensor& weight,
                                                   bool training,
                                                   const Tensor& mean,
                                                   const Tensor& invstd,
                                                   double eps,
                                                   NormGradients need);

/// layer_norm over the last `normalized_dims` dims.
autograd::tensor_list recorded_layer_norm_backward(const Tensor& g,
                                                   const Tensor& x,
                                                   const Tensor& weight,
                                                   int64_t normalized_dims,
                                                   double eps,
                                                   NormGradients need);

}  // namespace tandem::detail
