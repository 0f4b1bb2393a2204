// CPU copy (with dtype conversion, any strides) and fill.
#include <cstring>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {

void copy(const Tensor& out, const Tensor& src) {
  if (out.dtype() == src.dtype() && out.is_contiguous() && src.is_contiguous() &&
      out.sizes() == src.sizes()) {
    auto* to = static_cast<char*>(out.data_ptr());
    const auto* from = static_cast<const char*>(src.data_ptr());
    const auto bytes = static_cast<int64_t>(out.nbytes());
    if (to == from || bytes == 0) return;
    // Views of one buffer shifted against each other copy as one memmove:
    // memcpy, and ranges copied side by side, would read bytes already
    // overwritten.
    if (to < from + bytes && from < to + bytes) {
      std::memmove(to, from, bytes);
      return;
    }
    const auto size = static_cast<int64_t>(out.element_size());
    parallel_over(out.numel(), /*cost=*/1, [&](int64_t begin, int64_t end) {
      std::memcpy(to + begin * size, from + begin * size, (end - begin) * size);
    });
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename R>() {
    dispatch_dtype(src.dtype(), [&]<typename S>() {
      parallel_elementwise<R, S>(
          out, [](S x) -> R { return static_cast<R>(x); }, src);
    });
  });
}

void fill(const Tensor& out, Scalar value) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    // Integers go through int64 so that a negative value wraps for uint8
    // (ops/ has checked the range) instead of being an undefined conversion.
    const T v = std::is_integral_v<T> && !std::is_same_v<T, bool>
                    ? static_cast<T>(static_cast<int64_t>(value))
                    : static_cast<T>(value);
    parallel_elementwise<T>(out, [v]() -> T { return v; });
  });
}

}  // namespace tandem::backend::cpu
