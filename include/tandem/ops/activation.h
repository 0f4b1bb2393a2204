// Activations, softmax and dropout.
//
//   auto h = tandem::relu(tandem::linear(x, w, b));
//   auto p = tandem::softmax(logits, /*dim=*/1);
//   auto y = tandem::dropout(h, /*p=*/0.5, /*train=*/true);
//   auto z = tandem::leaky_relu(h, /*negative_slope=*/0.2);
//   auto q = tandem::prelu(h, weight);  // weight [1] or [channels]
#pragma once

#include <string_view>

#include "tandem/core/tensor.h"

namespace tandem {

Tensor relu(const Tensor& x);
Tensor& relu_(Tensor& x);
/// approximate: "none" (erf, PyTorch's default) or "tanh".
Tensor gelu(const Tensor& x, std::string_view approximate = "none");
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);

// PyTorch's pointwise activations (float32 and float64 inputs), with its
// defaults. The in-place forms overwrite x and return it.
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& x, double negative_slope = 0.01);
/// x > 0 ? x : alpha * (exp(x) - 1)
Tensor elu(const Tensor& x, double alpha = 1.0);
Tensor& elu_(Tensor& x, double alpha = 1.0);
/// scale * elu(x, alpha) with the self-normalising constants
/// alpha = 1.6732632..., scale = 1.0507009...
Tensor selu(const Tensor& x);
Tensor& selu_(Tensor& x);
/// x * sigmoid(x)
Tensor silu(const Tensor& x);
/// x * tanh(softplus(x))
Tensor mish(const Tensor& x);
/// log(1 + exp(beta * x)) / beta, and x where beta * x > threshold.
Tensor softplus(const Tensor& x, double beta = 1.0, double threshold = 20.0);
/// x clamped to [min_val, max_val].
Tensor hardtanh(const Tensor& x, double min_val = -1.0, double max_val = 1.0);
Tensor& hardtanh_(Tensor& x, double min_val = -1.0, double max_val = 1.0);
/// log(sigmoid(x)), computed without overflow.
Tensor log_sigmoid(const Tensor& x);
/// x / (1 + |x|)
Tensor softsign(const Tensor& x);
/// x > 0 ? x : weight * x, with weight [1] (shared) or [C] (one per channel,
/// dim 1 of x; dim 0 of a 1-D x). Differentiable in weight too.
Tensor prelu(const Tensor& x, const Tensor& weight);

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
/// Zeroes each element with probability p and scales the rest by 1/(1-p)
/// when train; identity otherwise.
Tensor dropout(const Tensor& x, double p, bool train);
/// Channel dropout of [N, C, H, W] (or unbatched [C, H, W]) input, as
/// torch's dropout2d: while training each whole channel is zeroed with
/// probability p and the others scaled by 1 / (1 - p); the identity
/// otherwise. Draws from the default generator, as dropout does.
Tensor dropout2d(const Tensor& x, double p, bool train);

}  // namespace tandem
