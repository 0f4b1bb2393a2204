// Reductions: over all elements, one dim, or a list of dims, with keepdim.
//
//   auto total = x.sum();
//   auto rows = tandem::mean(x, /*dim=*/{1}, /*keepdim=*/true);
//   auto [values, indices] = tandem::max(x, /*dim=*/1);
//   auto lengths = tandem::norm(x, /*p=*/2, /*dim=*/1);
//   auto spread = x.std(/*dim=*/{0}, /*unbiased=*/true, /*keepdim=*/true);
//   bool ok = tandem::all(x > 0).item<bool>();
#pragma once

#include <concepts>
#include <tuple>

#include "tandem/core/tensor.h"

namespace tandem {

Tensor sum(const Tensor& x);
Tensor sum(const Tensor& x, const IntList& dims, bool keepdim = false);
Tensor mean(const Tensor& x);
Tensor mean(const Tensor& x, const IntList& dims, bool keepdim = false);
/// Over all elements.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
/// Values and int64 indices along `dim`.
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
/// Index into the flattened tensor.
Tensor argmax(const Tensor& x);
Tensor argmin(const Tensor& x);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, int64_t dim, bool keepdim = false);

/// The p-norm (sum |x|^p)^(1/p) over all elements or over `dim` (an empty
/// list means all); p = INFINITY (-INFINITY) gives the largest (smallest)
/// |x|, p = 0 the count of non-zeros. The gradient at a zero norm is zero,
/// as in PyTorch. Floating-point input only.
Tensor norm(const Tensor& x, Scalar p = 2);
Tensor norm(const Tensor& x, Scalar p, const IntList& dim, bool keepdim = false);
template <std::integral I>
Tensor norm(const Tensor& x, Scalar p, I dim, bool keepdim = false) {
  return norm(x, p, IntList{static_cast<int64_t>(dim)}, keepdim);
}

/// Whether every (any) element is non-zero (NaN counts as non-zero), over
/// all elements or along `dim`: bool, or uint8 for uint8 input (as PyTorch).
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);

// Note [var and std overloads]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// LibTorch has var(bool unbiased) beside var(IntArrayRef dim, unbiased,
// keepdim), so there `x.var(1)` and even `x.var({1})` quietly pick the
// first (an int converts to bool before it converts to a list) and return
// the variance of all elements. Here the bool overload is a template that
// takes exactly a bool, and one dim comes with `unbiased` spelled out:
// x.var(true), x.var({1}) and x.var(1, true) mean what they say, and
// x.var(1) does not compile.

/// Variance with Bessel's correction (divided by n - 1) unless `unbiased`
/// is false (divided by n), over all elements or over `dim` (an empty list
/// means all). Floating-point input only.
Tensor var(const Tensor& x);
template <std::same_as<bool> Bool>
Tensor var(const Tensor& x, Bool unbiased) {
  return var(x, IntList{}, unbiased);
}
Tensor var(const Tensor& x,
           const IntList& dim,
           bool unbiased = true,
           bool keepdim = false);
template <std::integral I>
Tensor var(const Tensor& x, I dim, bool unbiased, bool keepdim = false) {
  return var(x, IntList{static_cast<int64_t>(dim)}, unbiased, keepdim);
}
/// sqrt(var); its gradient is zero where the deviation is zero.
Tensor std(const Tensor& x);
template <std::same_as<bool> Bool>
Tensor std(const Tensor& x, Bool unbiased) {
  return std(x, IntList{}, unbiased);
}
Tensor std(const Tensor& x,
           const IntList& dim,
           bool unbiased = true,
           bool keepdim = false);
template <std::integral I>
Tensor std(const Tensor& x, I dim, bool unbiased, bool keepdim = false) {
  return std(x, IntList{static_cast<int64_t>(dim)}, unbiased, keepdim);
}

/// log(sum(exp(x))) over `dim`, shifted by the maximum so it does not
/// overflow; -inf rows stay -inf. Floating-point input only.
Tensor logsumexp(const Tensor& x, const IntList& dim, bool keepdim = false);
template <std::integral I>
Tensor logsumexp(const Tensor& x, I dim, bool keepdim = false) {
  return logsumexp(x, IntList{static_cast<int64_t>(dim)}, keepdim);
}

}  // namespace tandem
