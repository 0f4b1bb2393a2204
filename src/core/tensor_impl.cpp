#include "tandem/core/tensor_impl.h"

#include "tandem/core/tensor.h"

namespace tandem {

namespace {

// a * b, or an error naming `sizes` when it does not fit in int64.
int64_t checked_product(int64_t a, int64_t b, const IntList& sizes) {
  int64_t product = 0;
  TANDEM_CHECK(!__builtin_mul_overflow(a, b, &product),
               "a tensor of sizes ",
               sizes,
               " has more elements than int64 can count");
  return product;
}

}  // namespace

IntList contiguous_strides(const IntList& sizes) {
  IntList strides(sizes.size());
  int64_t s = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s = checked_product(s, std::max<int64_t>(sizes[d], 1), sizes);
  }
  return strides;
}

int64_t numel_of(const IntList& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    if (s == 0) return 0;
  }
  for (int64_t s : sizes) n = checked_product(n, s, sizes);
  return n;
}

namespace {

bool compute_contiguous(const IntList& sizes, const IntList& strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (sizes[d] == 0) return true;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

}  // namespace

TensorImpl::TensorImpl(
    Storage storage, ScalarType dtype, IntList sizes, IntList strides, int64_t offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      offset_(offset),
      numel_(numel_of(sizes_)),
      contiguous_(compute_contiguous(sizes_, strides_)) {
  TANDEM_INTERNAL_ASSERT(sizes_.size() == strides_.size(),
                         "sizes ",
                         sizes_,
                         " and strides ",
                         strides_,
                         " differ in length");
}

TensorImpl::~TensorImpl() = default;

void TensorImpl::set_data(
    Storage storage, ScalarType dtype, IntList sizes, IntList strides, int64_t offset) {
  storage_ = std::move(storage);
  dtype_ = dtype;
  sizes_ = std::move(sizes);
  strides_ = std::move(strides);
  offset_ = offset;
  numel_ = numel_of(sizes_);
  contiguous_ = compute_contiguous(sizes_, strides_);
}

AutogradMeta& TensorImpl::autograd() {
  if (!autograd_) autograd_ = std::make_unique<AutogradMeta>();
  return *autograd_;
}

}  // namespace tandem
