// Elementwise arithmetic and comparisons with broadcasting (PyTorch's rules:
// sizes align from the right; a size-1 or missing dim stretches). Mixed
// dtypes promote (bool < uint8 < int64 < float32 < float64); a Scalar
// operand keeps the tensor's dtype unless the tensor is integral and the
// scalar is not a whole number.
//
//   auto c = tandem::add(a, b, /*alpha=*/2);    // a + 2 * b
//   auto m = tandem::where(x > 0, x, tandem::zeros_like(x));
#pragma once

#include <optional>

#include "tandem/core/tensor.h"

namespace tandem {

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor add(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha = 1);
Tensor sub(const Tensor& a, Scalar b, Scalar alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, Scalar b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, Scalar b);
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor pow(const Tensor& base, Scalar exponent);
Tensor pow(Scalar base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
/// Elementwise, as maximum and minimum (LibTorch's overloads).
Tensor max(const Tensor& a, const Tensor& b);
Tensor min(const Tensor& a, const Tensor& b);
/// x + value * tensor1 * tensor2 and x + value * tensor1 / tensor2.
Tensor addcmul(const Tensor& x,
               const Tensor& tensor1,
               const Tensor& tensor2,
               Scalar value = 1);
Tensor addcdiv(const Tensor& x,
               const Tensor& tensor1,
               const Tensor& tensor2,
               Scalar value = 1);

Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor clamp(const Tensor& x,
             std::optional<Scalar> min,
             std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& x, Scalar min);
Tensor clamp_max(const Tensor& x, Scalar max);

// Comparisons return bool tensors and have no gradient.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, Scalar b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, Scalar b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, Scalar b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, Scalar b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, Scalar b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, Scalar b);
/// True when shapes match and every element is equal.
bool equal(const Tensor& a, const Tensor& b);
/// |a - b| <= atol + rtol * |b| everywhere (shapes must broadcast).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);

/// cond ? a : b, broadcasting all three; cond must be bool.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
/// x with `value` where `mask` (bool, broadcast to x's shape) is true; the
/// tensor value must be 0-dim. Keeps x's dtype.
Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value);

/// The broadcast shape of two shapes; throws naming `op` if incompatible.
IntList broadcast_shapes(const IntList& a, const IntList& b, const char* op);
/// Sums `t` down to `sizes` (the inverse of broadcasting; for backward).
Tensor sum_to(const Tensor& t, const IntList& sizes);

}  // namespace tandem
