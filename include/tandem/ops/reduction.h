// Reductions: over all elements, one dim, or a list of dims, with keepdim.
//
//   auto total = x.sum();
//   auto rows = tandem::mean(x, /*dim=*/{1}, /*keepdim=*/true);
//   auto [values, indices] = tandem::max(x, /*dim=*/1);
#pragma once

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

}  // namespace tandem
