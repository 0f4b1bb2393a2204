// CUDA elementwise kernels: unary maps, binary maps (arithmetic, comparisons,
// activation backwards) and where. The formulas are backend/scalar_math.h's,
// shared with the CPU backend (same ops, dtypes, branches and shortcuts);
// the math functions are CUDA's (within an ulp or two of the host's), and
// nvcc may fuse a multiply and an add.
#include <type_traits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/scalar_math.h"

namespace tandem::backend::cuda {

namespace sm = scalar_math;

void unary(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b) {
  cudaStream_t stream = prepare(out);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    sm::dispatch_unary(op, [&]<UnaryOp K>() {
      if constexpr (sm::kUnaryTakes<K, T>) {
        elementwise<T, T>(
            stream,
            out,
            sm::Unary<K, T>{sm::narrow_scalar<T>(a), sm::narrow_scalar<T>(b)},
            in);
      } else {
        TANDEM_INTERNAL_ASSERT(
            false, "unary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
      }
    });
  });
}

void binary(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar param) {
  cudaStream_t stream = prepare(out);
  sm::dispatch_binary(op, [&]<BinaryOp K>() {
    if constexpr (sm::kIsComparison<K>) {
      dispatch_dtype(a.dtype(), [&]<typename T>() {
        elementwise<bool, T, T>(stream, out, sm::Compare<K, T>{}, a, b);
      });
      return;
    }
    dispatch_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool> && sm::kBoolBinaryTakes<K>) {
        elementwise<bool, bool, bool>(stream, out, sm::BoolBinary<K>{}, a, b);
      } else if constexpr (sm::kBinaryTakes<K, T>) {
        elementwise<T, T, T>(stream, out, sm::Binary<K, T>{static_cast<T>(param)}, a, b);
      } else {
        TANDEM_INTERNAL_ASSERT(false,
                               "binary op ",
                               static_cast<int>(op),
                               " has no kernel for ",
                               out.dtype());
      }
    });
  });
}

namespace {

template <typename T>
void where_typed(cudaStream_t stream,
                 const Tensor& out,
                 const Tensor& cond,
                 const Tensor& a,
                 const Tensor& b) {
  elementwise<T, bool, T, T>(
      stream,
      out,
      [] __device__(bool c, T x, T y) -> T { return c ? x : y; },
      cond,
      a,
      b);
}

}  // namespace

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  cudaStream_t stream = prepare(out);
  dispatch_dtype(out.dtype(),
                 [&]<typename T>() { where_typed<T>(stream, out, cond, a, b); });
}

}  // namespace tandem::backend::cuda
