// CPU elementwise kernels: unary maps, binary maps (arithmetic, comparisons,
// activation backwards) and where. The formulas are backend/scalar_math.h's,
// shared with the CUDA backend; this file runs them through the CPU's
// parallel loop.
#include <type_traits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/scalar_math.h"

namespace tandem::backend::cpu {

namespace sm = scalar_math;

void unary(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    sm::dispatch_unary(op, [&]<UnaryOp K>() {
      if constexpr (sm::kUnaryTakes<K, T>) {
        parallel_elementwise<T, T>(
            out, sm::Unary<K, T>{sm::narrow_scalar<T>(a), sm::narrow_scalar<T>(b)}, in);
      } else {
        TANDEM_INTERNAL_ASSERT(
            false, "unary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
      }
    });
  });
}

void binary(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar param) {
  sm::dispatch_binary(op, [&]<BinaryOp K>() {
    if constexpr (sm::kIsComparison<K>) {
      dispatch_dtype(a.dtype(), [&]<typename T>() {
        parallel_elementwise<bool, T, T>(out, sm::Compare<K, T>{}, a, b);
      });
      return;
    }
    dispatch_dtype(out.dtype(), [&]<typename T>() {
      if constexpr (std::is_same_v<T, bool> && sm::kBoolBinaryTakes<K>) {
        parallel_elementwise<bool, bool, bool>(out, sm::BoolBinary<K>{}, a, b);
      } else if constexpr (sm::kBinaryTakes<K, T>) {
        parallel_elementwise<T, T, T>(out, sm::Binary<K, T>{static_cast<T>(param)}, a, b);
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

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    parallel_elementwise<T, bool, T, T>(
        out, [](bool c, T x, T y) -> T { return c ? x : y; }, cond, a, b);
  });
}

}  // namespace tandem::backend::cpu
