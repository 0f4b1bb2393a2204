// Activations, softmax and dropout.
//
//   auto h = tandem::relu(tandem::linear(x, w, b));
//   auto p = tandem::softmax(logits, /*dim=*/1);
//   auto y = tandem::dropout(h, /*p=*/0.5, /*train=*/true);
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
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
/// Zeroes each element with probability p and scales the rest by 1/(1-p)
/// when train; identity otherwise.
Tensor dropout(const Tensor& x, double p, bool train);

}  // namespace tandem
