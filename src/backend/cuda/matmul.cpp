// CUDA matrix products through cuBLAS: gemm and bmm.
//
// Note [Row-major products in cuBLAS]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// cuBLAS reads matrices column-major. A row-major m x n matrix C whose rows
// are ldc apart is, to cuBLAS, the column-major n x m matrix C^T with the
// same leading dimension, so C = A B is computed as C^T = B^T A^T: B is
// cuBLAS's first operand, A its second, and m and n trade places. A
// row-major operand is then read as it is (CUBLAS_OP_N, ld = its row
// stride); a transposed view (column stride 1) is, to cuBLAS, the
// transpose of what it needs (CUBLAS_OP_T, ld = its column stride). These
// are exactly the layouts the CPU gemm reads without copies, so ops/ hands
// both backends the same operands.
#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "backend/cpu/loops.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/cuda_libraries.h"
#include "tandem/core/error.h"

namespace tandem::backend::cuda {
namespace {

using cpu::dispatch_floating;

// One operand as cuBLAS sees it (Note [Row-major products in cuBLAS]).
struct Operand {
  cublasOperation_t op;
  int64_t ld;
};

// rows x cols with element strides (s0, s1); ops/ guarantees one of them is
// 1 with a leading dimension large enough. A size-1 dim may carry any
// stride, so the leading dimension is clamped to what cuBLAS accepts.
Operand operand(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (s1 == 1 || cols == 1) {
    if (rows == 1 || s0 >= std::max<int64_t>(cols, 1)) {
      return {CUBLAS_OP_N, rows == 1 ? std::max<int64_t>(cols, 1) : s0};
    }
  }
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(
      (s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)),
      "gemm: operand strides [",
      s0,
      ", ",
      s1,
      "] are not BLAS-compatible");
  return {CUBLAS_OP_T, cols == 1 ? std::max<int64_t>(rows, 1) : s1};
}

// A batch of row-major matrices: element (i, r, c) at
// data[i * batch + r * s0 + c * s1]; batch may be 0 (one matrix shared by
// every product, as a broadcast bmm operand).
template <typename T>
struct Matrices {
  const T* data;
  int64_t batch, s0, s1;
};

template <typename T>
Matrices<T> matrices(const Tensor& t) {
  const int64_t d = t.dim();
  return {t.data_ptr<T>(), d == 3 ? t.stride(0) : 0, t.stride(d - 2), t.stride(d - 1)};
}

// c = beta * c for a product with nothing to multiply (k == 0): cuBLAS is
// not asked (it would require ld >= 1 of empty operands), and beta == 0
// overwrites (c may be uninitialised or hold NaN).
template <typename T>
void scale(cudaStream_t stream, cublasHandle_t handle, T* c, int64_t count, T beta) {
  if (beta == T(0)) {
    TANDEM_CUDA_CHECK(cudaMemsetAsync(c, 0, count * sizeof(T), stream));
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    TANDEM_CUBLAS_CHECK(cublasSscal_64(handle, count, &beta, c, 1));
  } else {
    TANDEM_CUBLAS_CHECK(cublasDscal_64(handle, count, &beta, c, 1));
  }
}

// c[i] = alpha * a[i] b[i] + beta * c[i] for i < batch, c contiguous
// [batch, m, n]; a is m x k and b is k x n.
template <typename T>
void batched_gemm(const Tensor& out,
                  int64_t batch,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  T alpha,
                  Matrices<T> a,
                  Matrices<T> b,
                  T beta) {
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(out.is_contiguous(), "gemm: output not contiguous");
  const cudaStream_t stream = prepare(out);
  if (batch == 0 || m == 0 || n == 0) return;
  cublasHandle_t handle = cublas_handle(out.device());
  T* c = out.data_ptr<T>();
  if (k == 0) return scale(stream, handle, c, batch * m * n, beta);
  // Swapped: cuBLAS computes C^T = B^T A^T (Note [Row-major products in cuBLAS]).
  const Operand ob = operand(k, n, b.s0, b.s1);
  const Operand oa = operand(m, k, a.s0, a.s1);
  if (batch == 1) {
    if constexpr (std::is_same_v<T, float>) {
      TANDEM_CUBLAS_CHECK(cublasSgemm_64(handle,
                                         ob.op,
                                         oa.op,
                                         n,
                                         m,
                                         k,
                                         &alpha,
                                         b.data,
                                         ob.ld,
                                         a.data,
                                         oa.ld,
                                         &beta,
                                         c,
                                         n));
    } else {
      TANDEM_CUBLAS_CHECK(cublasDgemm_64(handle,
                                         ob.op,
                                         oa.op,
                                         n,
                                         m,
                                         k,
                                         &alpha,
                                         b.data,
                                         ob.ld,
                                         a.data,
                                         oa.ld,
                                         &beta,
                                         c,
                                         n));
    }
    return;
  }
  const auto gemm_strided_batched = [] {
    if constexpr (std::is_same_v<T, float>) {
      return &cublasSgemmStridedBatched_64;
    } else {
      return &cublasDgemmStridedBatched_64;
    }
  }();
  TANDEM_CUBLAS_CHECK(gemm_strided_batched(handle,
                                           ob.op,
                                           oa.op,
                                           n,
                                           m,
                                           k,
                                           &alpha,
                                           b.data,
                                           ob.ld,
                                           b.batch,
                                           a.data,
                                           oa.ld,
                                           a.batch,
                                           &beta,
                                           c,
                                           n,
                                           m * n,
                                           batch));
}

}  // namespace

void gemm(
    const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  dispatch_floating(out.dtype(), "gemm", [&]<typename T>() {
    batched_gemm<T>(out,
                    1,
                    m,
                    n,
                    k,
                    static_cast<T>(alpha),
                    matrices<T>(a),
                    matrices<T>(b),
                    static_cast<T>(beta));
  });
}

void bmm(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  dispatch_floating(out.dtype(), "bmm", [&]<typename T>() {
    // Batch strides may be 0 (a broadcast operand is read, not copied).
    batched_gemm<T>(out, batch, m, n, k, T(1), matrices<T>(a), matrices<T>(b), T(0));
  });
}

}  // namespace tandem::backend::cuda
