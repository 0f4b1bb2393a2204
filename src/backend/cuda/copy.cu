// CUDA copy (dtype conversion, any strides, broadcast sources) and fill,
// within one GPU (cuda_copy.cpp moves data between devices).
#include <type_traits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

template <typename R, typename S>
void convert(cudaStream_t stream, const Tensor& out, const Tensor& src) {
  elementwise<R, S>(
      stream,
      out,
      [] __device__(S x) -> R {
        // A float to uint8 goes through int64, so that out-of-range values
        // wrap as on the CPU instead of saturating (both are undefined C++).
        if constexpr (std::is_floating_point_v<S> && std::is_same_v<R, uint8_t>) {
          return static_cast<R>(static_cast<int64_t>(x));
        } else {
          return static_cast<R>(x);
        }
      },
      src);
}

template <typename T>
void fill_typed(cudaStream_t stream, const Tensor& out, T value) {
  elementwise<T>(stream, out, [value] __device__() -> T { return value; });
}

}  // namespace

void copy(const Tensor& out, const Tensor& src) {
  cudaStream_t stream = prepare(out);
  if (out.dtype() == src.dtype() && out.is_contiguous() && src.is_contiguous() &&
      out.sizes() == src.sizes()) {
    if (out.data_ptr() != src.data_ptr() && out.numel() > 0) {
      TANDEM_CUDA_CHECK(cudaMemcpyAsync(out.data_ptr(),
                                        src.data_ptr(),
                                        out.nbytes(),
                                        cudaMemcpyDeviceToDevice,
                                        stream));
    }
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename R>() {
    dispatch_dtype(src.dtype(), [&]<typename S>() { convert<R, S>(stream, out, src); });
  });
}

void fill(const Tensor& out, Scalar value) {
  cudaStream_t stream = prepare(out);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    // Integers go through int64 so that a negative value wraps for uint8
    // (ops/ has checked the range), as the CPU kernel does.
    const T v = std::is_integral_v<T> && !std::is_same_v<T, bool>
                    ? static_cast<T>(static_cast<int64_t>(value))
                    : static_cast<T>(value);
    fill_typed<T>(stream, out, v);
  });
}

}  // namespace tandem::backend::cuda
