#include "ops/op_utils.h"

namespace tandem::detail {

void check_defined(const char* op, const Tensor& t, const char* name) {
  TANDEM_CHECK(t.defined(), op, ": argument '", name, "' is undefined");
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    if (first == nullptr) {
      first = t;
      continue;
    }
    TANDEM_CHECK(t->device() == first->device(), op,
                 ": expected all tensors on the same device, got ",
                 first->device(), " and ", t->device(),
                 " (move one with .to(device))");
  }
}

void check_same_device(const char* op, const std::vector<Tensor>& ts) {
  for (size_t i = 1; i < ts.size(); ++i) {
    check_same_device(op, {&ts[0], &ts[i]});
  }
}

void check_floating(const char* op, const Tensor& t, const char* name) {
  TANDEM_CHECK(t.is_floating_point(), op, ": expected '", name,
               "' to be float32 or float64, got ", t.dtype(), " (shape ",
               t.sizes(), ")");
}

Tensor make_empty(const IntList& sizes, ScalarType dtype, Device device) {
  for (int64_t s : sizes) {
    TANDEM_CHECK(s >= 0, "empty: sizes must be non-negative, got ", sizes);
  }
  int64_t n = numel_of(sizes);
  Storage storage = make_storage(n * element_size(dtype), device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, sizes,
                                             contiguous_strides(sizes), 0));
}

Tensor raw_view(const Tensor& t, IntList sizes, IntList strides, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(t.unsafe_impl()->storage(),
                                             t.dtype(), std::move(sizes),
                                             std::move(strides), offset));
}

Tensor broadcast_to_raw(const Tensor& t, const IntList& sizes) {
  if (t.sizes() == sizes) return t;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t lead = nd - t.dim();
  TANDEM_INTERNAL_ASSERT(lead >= 0, "cannot broadcast ", t.sizes(), " to ", sizes);
  IntList strides(nd, 0);
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t s = t.sizes()[d];
    TANDEM_INTERNAL_ASSERT(s == sizes[lead + d] || s == 1, "cannot broadcast ",
                           t.sizes(), " to ", sizes);
    strides[lead + d] = s == 1 ? 0 : t.strides()[d];
  }
  return raw_view(t, sizes, std::move(strides), t.storage_offset());
}

}  // namespace tandem::detail
