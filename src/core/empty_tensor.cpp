#include "core/empty_tensor.h"

#include <limits>

#include "tandem/core/error.h"

namespace tandem::detail {

Tensor make_empty(const IntList& sizes, ScalarType dtype, Device device) {
  for (int64_t s : sizes) {
    TANDEM_CHECK(s >= 0, "empty: sizes must be non-negative, got ", sizes);
  }
  const int64_t n = numel_of(sizes);
  const auto item = static_cast<int64_t>(element_size(dtype));
  TANDEM_CHECK(n <= std::numeric_limits<int64_t>::max() / item,
               "empty: a tensor of sizes ",
               sizes,
               " and dtype ",
               dtype,
               " needs more bytes than int64 can count");
  Storage storage = make_storage(static_cast<size_t>(n * item), device);
  return Tensor(std::make_shared<TensorImpl>(
      std::move(storage), dtype, sizes, contiguous_strides(sizes), 0));
}

}  // namespace tandem::detail
