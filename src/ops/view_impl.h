// Private helpers shared by the view ops (shape.cpp, slice.cpp) and cat.
#pragma once

#include <utility>
#include <vector>

#include "ops/op_utils.h"
#include "tandem/graph/node.h"

namespace tandem::detail {

// Marks views made from `x` as views of x's base (x itself when x is not a
// view), so that a write into them can reach the base's graph (Note
// [Writing through a view]), and records `backward` for them.
template <typename F>
void record_view(const char* node,
                 const Tensor& x,
                 const std::vector<Tensor*>& outs,
                 F&& backward) {
  std::shared_ptr<TensorImpl> base = x.unsafe_impl()->view_base();
  if (!x.is_view()) base = x.impl_ptr();
  for (Tensor* out : outs) out->unsafe_impl()->set_view_base(base, x._version());
  if (!autograd::any_requires_grad({&x})) return;
  autograd::record_function(node, {x}, outs, std::forward<F>(backward));
}

// Geometry of x.narrow(dim, start, length) without autograd; `dim` wrapped.
inline Tensor raw_narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  IntList sizes = x.sizes();
  sizes[dim] = length;
  return raw_view(
      x, std::move(sizes), x.strides(), x.storage_offset() + start * x.strides()[dim]);
}

}  // namespace tandem::detail
