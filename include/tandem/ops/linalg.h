// Matrix products through the BLAS (float32 and float64).
//
//   auto y = tandem::linear(x, weight, bias);   // x @ weight^T + bias
//   auto c = tandem::matmul(a, b);              // numpy-style broadcasting
#pragma once

#include "tandem/core/tensor.h"

namespace tandem {

/// [n, k] @ [k, m] -> [n, m]
Tensor mm(const Tensor& a, const Tensor& b);
/// [b, n, k] @ [b, k, m] -> [b, n, m]
Tensor bmm(const Tensor& a, const Tensor& b);
/// 1-D and 2-D cases as mm/dot/mv; higher ranks batch with broadcasting.
Tensor matmul(const Tensor& a, const Tensor& b);
/// The inner product of two 1-D tensors of one length.
Tensor dot(const Tensor& a, const Tensor& b);
/// A 2-D matrix [n, m] times a 1-D vector [m]: [n].
Tensor mv(const Tensor& matrix, const Tensor& vec);
/// input [..., in] @ weight[out, in]^T + bias[out]; bias may be undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

}  // namespace tandem
