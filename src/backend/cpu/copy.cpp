// CPU copy (with dtype conversion, any strides) and fill.
#include <cstring>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {

void copy(const Tensor& out, const Tensor& src) {
  if (out.dtype() == src.dtype() && out.is_contiguous() && src.is_contiguous() &&
      out.sizes() == src.sizes()) {
    if (out.data_ptr() != src.data_ptr() && out.numel() > 0) {
      std::memcpy(out.data_ptr(), src.data_ptr(), out.nbytes());
    }
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename R>() {
    dispatch_dtype(src.dtype(), [&]<typename S>() {
      elementwise<R, S>(
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
    elementwise<T>(out, [v]() -> T { return v; });
  });
}

}  // namespace tandem::backend::cpu
