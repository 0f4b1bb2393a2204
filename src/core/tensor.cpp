// Tensor's own accessors; the op methods live in src/ops/tensor_methods.cpp
// and the autograd ones in src/graph/tensor_autograd.cpp.
#include "tandem/core/tensor.h"

#include "tandem/core/wrap_dim.h"

namespace tandem {

int64_t Tensor::size(int64_t dim) const {
  return sizes()[wrap_dim(dim, this->dim(), "size")];
}

int64_t Tensor::stride(int64_t dim) const {
  return strides()[wrap_dim(dim, this->dim(), "stride")];
}

bool Tensor::is_view() const {
  const std::shared_ptr<TensorImpl> base = impl().view_base();
  // set_data may since have given either of them other memory.
  return base != nullptr && base != impl_ && base->storage() == impl().storage();
}

Tensor Tensor::_base() const {
  TANDEM_CHECK(is_view(), "_base: the tensor (shape ", sizes(), ") is not a view");
  return Tensor(impl().view_base());
}

void Tensor::set_data(const Tensor& data) const {
  TANDEM_CHECK(data.defined(), "set_data: the new data is undefined");
  impl().set_data(data.impl().storage(),
                  data.dtype(),
                  data.sizes(),
                  data.strides(),
                  data.storage_offset());
  // A graph still alive may hold the leaf's accumulator, which knows the old
  // shape, dtype and device; later graphs must get a fresh one.
  if (AutogradMeta* meta = impl().autograd_meta()) meta->grad_accumulator.reset();
}

Tensor Tensor::pin_memory() const {
  TANDEM_CHECK(
      is_cpu(), "pin_memory: only CPU tensors can be pinned, got one on ", device());
  if (is_pinned()) return *this;
  Tensor pinned(std::make_shared<TensorImpl>(make_pinned_storage(nbytes(), device()),
                                             dtype(),
                                             sizes(),
                                             contiguous_strides(sizes()),
                                             /*offset=*/0));
  pinned.copy_(*this);  // records autograd history, as PyTorch's pin_memory
  return pinned;
}

TensorOptions Tensor::options() const { return TensorOptions(dtype()).device(device()); }

namespace detail {
namespace {

template <typename R>
R read_item(const Tensor& t) {
  TANDEM_CHECK(t.numel() == 1,
               "item: expected a tensor with one element, ",
               "got shape ",
               t.sizes(),
               " (",
               t.numel(),
               " elements)");
  Tensor c = t.is_cpu() ? t : t.to(Device(kCPU));
  const void* p = c.data_ptr();
  switch (c.dtype()) {
    case kBool:
      return static_cast<R>(*static_cast<const bool*>(p));
    case kUInt8:
      return static_cast<R>(*static_cast<const uint8_t*>(p));
    case kInt64:
      return static_cast<R>(*static_cast<const int64_t*>(p));
    case kFloat32:
      return static_cast<R>(*static_cast<const float*>(p));
    case kFloat64:
      return static_cast<R>(*static_cast<const double*>(p));
  }
  throw_internal("a known dtype", __FILE__, __LINE__, "unknown dtype");
}

}  // namespace

double item_as_double(const Tensor& t) { return read_item<double>(t); }
int64_t item_as_int64(const Tensor& t) { return read_item<int64_t>(t); }

}  // namespace detail

namespace {

std::ostream& print_sizes(std::ostream& out, const int64_t* sizes, size_t count) {
  out << '[';
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) out << ", ";
    out << sizes[i];
  }
  return out << ']';
}

}  // namespace

std::ostream& operator<<(std::ostream& out, const IntList& sizes) {
  return print_sizes(out, sizes.data(), sizes.size());
}

std::ostream& operator<<(std::ostream& out, const std::vector<int64_t>& sizes) {
  return print_sizes(out, sizes.data(), sizes.size());
}

}  // namespace tandem
