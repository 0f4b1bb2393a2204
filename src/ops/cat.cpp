// cat and stack: join tensors along a dim into a new tensor (a copy).
#include "ops/op_utils.h"
#include "ops/view_impl.h"
#include "tandem/graph/node.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::tensor_list;

// PyTorch skips 1-D empty tensors in cat whatever their shape: old code
// used them as "nothing" placeholders.
bool is_legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

void check_all_defined(const char* op, const std::vector<Tensor>& tensors) {
  TANDEM_CHECK(!tensors.empty(), op, ": expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    TANDEM_CHECK(tensors[i].defined(), op, ": tensor ", i, " in the list is undefined");
  }
  detail::check_same_device(op, tensors);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  const profiler::Span span = detail::op_span("cat", tensors);
  check_all_defined("cat", tensors);
  ScalarType dtype = tensors[0].dtype();
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    dtype = promote_types(dtype, t.dtype());
    if (ref == nullptr && !is_legacy_empty(t)) ref = &t;
  }
  if (ref == nullptr) return detail::make_empty({0}, dtype, tensors[0].device());
  TANDEM_CHECK(ref->dim() > 0, "cat: zero-dimensional tensor cannot be concatenated");
  const int64_t d = wrap_dim(dim, ref->dim(), "cat");
  IntList shape = ref->sizes();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_legacy_empty(t)) continue;
    TANDEM_CHECK(t.dim() == ref->dim(),
                 "cat: tensors must have the same number of "
                 "dimensions, got ",
                 ref->dim(),
                 " and ",
                 t.dim(),
                 " (shapes ",
                 ref->sizes(),
                 " and ",
                 t.sizes(),
                 " for tensor ",
                 i,
                 ")");
    for (int64_t k = 0; k < t.dim(); ++k) {
      TANDEM_CHECK(k == d || t.sizes()[k] == ref->sizes()[k],
                   "cat: sizes of tensors ",
                   "must match except in dimension ",
                   d,
                   "; expected size ",
                   ref->sizes()[k],
                   " but got size ",
                   t.sizes()[k],
                   " for tensor ",
                   i,
                   " (shape ",
                   t.sizes(),
                   ") in dimension ",
                   k);
    }
    shape[d] += t.sizes()[d];
  }
  Tensor out = detail::make_empty(shape, dtype, ref->device());
  const auto& kernels = detail::kernels_for(out);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (is_legacy_empty(t)) continue;
    Tensor part = detail::raw_narrow(out, d, offset, t.sizes()[d]);
    if (t.numel() > 0) kernels.copy(part, t);
    offset += t.sizes()[d];
  }
  if (autograd::any_requires_grad(tensors)) {
    std::vector<std::pair<IntList, ScalarType>> metas;
    metas.reserve(tensors.size());
    for (const Tensor& t : tensors) metas.emplace_back(t.sizes(), t.dtype());
    autograd::record_function(
        "CatBackward", tensors, {&out}, [metas, d](const tensor_list& g) {
          tensor_list grads;
          int64_t start = 0;
          for (const auto& [sizes, type] : metas) {
            if (!is_floating_point(type)) {
              grads.emplace_back();
            } else if (sizes.size() == 1 && sizes[0] == 0) {
              grads.push_back(zeros({0}, TensorOptions(type).device(g[0].device())));
            } else {
              grads.push_back(g[0].narrow(d, start, sizes[d]).to(type));
              start += sizes[d];
            }
          }
          return grads;
        });
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  check_all_defined("stack", tensors);
  for (size_t i = 1; i < tensors.size(); ++i) {
    TANDEM_CHECK(tensors[i].sizes() == tensors[0].sizes(),
                 "stack: expected each ",
                 "tensor to be equal size, but got ",
                 tensors[0].sizes(),
                 " at entry 0 and ",
                 tensors[i].sizes(),
                 " at entry ",
                 i);
  }
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (const Tensor& t : tensors) parts.push_back(t.unsqueeze(d));
  return cat(parts, d);
}

}  // namespace tandem
