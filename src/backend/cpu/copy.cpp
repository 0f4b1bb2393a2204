// CPU copy (with dtype conversion, any strides) and fill.
#include <cstring>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {

void copy(const Tensor& out, const Tensor& src) {
  if (out.dtype() == src.dtype() && out.is_contiguous() &&
      src.is_contiguous() && out.sizes() == src.sizes()) {
    if (out.data_ptr() != src.data_ptr() && out.numel() > 0) {
      std::memcpy(out.data_ptr(), src.data_ptr(), out.nbytes());
    }
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename R>() {
    dispatch_dtype(src.dtype(), [&]<typename S>() {
      elementwise<R, S>(out, [](S x) -> R { return static_cast<R>(x); }, src);
    });
  });
}

void fill(const Tensor& out, Scalar value) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    const T v = static_cast<T>(value);
    elementwise<T>(out, [v]() -> T { return v; });
  });
}

}  // namespace tandem::backend::cpu
