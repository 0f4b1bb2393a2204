// Private: the views gather and scatter_add (CPU and CUDA) loop over. See
// Note [Pinned views] in cpu/indexing.cpp.
#pragma once

#include <memory>
#include <utility>

#include "tandem/core/tensor.h"
#include "tandem/core/tensor_impl.h"

namespace tandem::backend {

/// `t`'s memory seen with other sizes and strides (elements).
inline Tensor restrided(const Tensor& t, IntList sizes, IntList strides) {
  return Tensor(std::make_shared<TensorImpl>(t.unsafe_impl()->storage(),
                                             t.dtype(),
                                             std::move(sizes),
                                             std::move(strides),
                                             t.storage_offset()));
}

/// `t` viewed with `sizes`, held still along `dim` (a pinned view).
inline Tensor pinned(const Tensor& t, const IntList& sizes, int64_t dim) {
  IntList strides = t.strides();
  strides[dim] = 0;
  return restrided(t, sizes, std::move(strides));
}

/// A 1-D index viewed with `sizes`: it varies along `dim` only.
inline Tensor repeated_index(const Tensor& index, const IntList& sizes, int64_t dim) {
  IntList strides(sizes.size(), 0);
  strides[dim] = index.stride(0);
  return restrided(index, sizes, std::move(strides));
}

}  // namespace tandem::backend
