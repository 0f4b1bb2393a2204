// Indexing with int64 index tensors, and embedding lookup.
//
//   auto rows = tandem::index_select(x, /*dim=*/0, idx);
//   auto picked = tandem::gather(x, /*dim=*/1, idx2d);
//   auto e = tandem::embedding(weight, token_ids);   // [..., dim]
#pragma once

#include "tandem/core/tensor.h"

namespace tandem {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
/// Rows of `weight` [num, dim] picked by `indices` (any shape, int64);
/// the gradient of row padding_idx is always zero when padding_idx >= 0.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1);

}  // namespace tandem
