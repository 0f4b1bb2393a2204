// Private helpers shared by the view ops (shape.cpp, slice.cpp) and cat.
#pragma once

#include <utility>
#include <vector>

#include "ops/op_utils.h"
#include "tandem/graph/node.h"

namespace tandem::detail {

// Records `backward` for views made from `x` and marks them as views, so
// that in-place ops on them (which x's graph would not see) are refused.
template <typename F>
void record_view(const char* node,
                 const Tensor& x,
                 const std::vector<Tensor*>& outs,
                 F&& backward) {
  if (!autograd::any_requires_grad({&x})) return;
  autograd::record_function(node, {x}, outs, std::forward<F>(backward));
  for (Tensor* out : outs) out->unsafe_impl()->autograd().is_view = true;
}

// Geometry of x.narrow(dim, start, length) without autograd; `dim` wrapped.
inline Tensor raw_narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  IntList sizes = x.sizes();
  sizes[dim] = length;
  return raw_view(
      x, std::move(sizes), x.strides(), x.storage_offset() + start * x.strides()[dim]);
}

}  // namespace tandem::detail
