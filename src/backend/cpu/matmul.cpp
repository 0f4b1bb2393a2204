// CPU matrix products through CBLAS (OpenBLAS). Every BLAS call tandem makes
// lives in this file, so giving each logical CPU device its own share of
// cores later changes one place.
#include <cblas.h>

#include <algorithm>
#include <climits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {
namespace {

// One gemm operand as CBLAS sees it: a row-major matrix, possibly read
// transposed, so a transposed view (x.t()) needs no copy.
struct Operand {
  CBLAS_TRANSPOSE trans;
  blasint ld;
};

blasint to_blas_int(int64_t v) {
  TANDEM_INTERNAL_ASSERT(
      v <= INT_MAX, "gemm: dimension ", v, " exceeds the BLAS integer range");
  return static_cast<blasint>(v);
}

// rows x cols with element strides (s0, s1); ops/ guarantees one of them is
// 1 with a leading dimension large enough. A size-1 dim may carry any stride,
// so the leading dimension is clamped to what CBLAS accepts.
Operand operand(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (s1 == 1 || cols == 1) {
    if (rows == 1 || s0 >= std::max<int64_t>(cols, 1)) {
      return {CblasNoTrans, to_blas_int(rows == 1 ? std::max<int64_t>(cols, 1) : s0)};
    }
  }
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(
      (s0 == 1 || rows == 1) && (cols == 1 || s1 >= std::max<int64_t>(rows, 1)),
      "gemm: operand strides [",
      s0,
      ", ",
      s1,
      "] are not BLAS-compatible");
  return {CblasTrans, to_blas_int(cols == 1 ? std::max<int64_t>(rows, 1) : s1)};
}

template <typename T>
void gemm_raw(int64_t m,
              int64_t n,
              int64_t k,
              T alpha,
              const T* a,
              Operand oa,
              const T* b,
              Operand ob,
              T beta,
              T* c) {
  const blasint ldc = to_blas_int(std::max<int64_t>(n, 1));
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor,
                oa.trans,
                ob.trans,
                to_blas_int(m),
                to_blas_int(n),
                to_blas_int(k),
                alpha,
                a,
                oa.ld,
                b,
                ob.ld,
                beta,
                c,
                ldc);
  } else {
    cblas_dgemm(CblasRowMajor,
                oa.trans,
                ob.trans,
                to_blas_int(m),
                to_blas_int(n),
                to_blas_int(k),
                alpha,
                a,
                oa.ld,
                b,
                ob.ld,
                beta,
                c,
                ldc);
  }
}

// out = beta * out when there is nothing to multiply (k == 0); BLAS is not
// asked, and beta == 0 overwrites (out may be uninitialised).
template <typename T>
void scale(T* c, int64_t count, T beta) {
  for (int64_t i = 0; i < count; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
}

}  // namespace

void gemm(
    const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (m == 0 || n == 0) return;
  dispatch_floating(out.dtype(), "gemm", [&]<typename T>() {
    T* c = out.data_ptr<T>();
    if (k == 0) return scale(c, m * n, static_cast<T>(beta));
    gemm_raw<T>(m,
                n,
                k,
                static_cast<T>(alpha),
                a.data_ptr<T>(),
                operand(m, k, a.stride(0), a.stride(1)),
                b.data_ptr<T>(),
                operand(k, n, b.stride(0), b.stride(1)),
                static_cast<T>(beta),
                c);
  });
}

void bmm(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  if (batch == 0 || m == 0 || n == 0) return;
  dispatch_floating(out.dtype(), "bmm", [&]<typename T>() {
    T* c = out.data_ptr<T>();
    if (k == 0) return scale(c, batch * m * n, T(0));
    const T* pa = a.data_ptr<T>();
    const T* pb = b.data_ptr<T>();
    const Operand oa = operand(m, k, a.stride(1), a.stride(2));
    const Operand ob = operand(k, n, b.stride(1), b.stride(2));
    // Batch strides may be 0 (a broadcast operand is read, not copied).
    for (int64_t i = 0; i < batch; ++i) {
      gemm_raw<T>(m,
                  n,
                  k,
                  T(1),
                  pa + i * a.stride(0),
                  oa,
                  pb + i * b.stride(0),
                  ob,
                  T(0),
                  c + i * m * n);
    }
  });
}

}  // namespace tandem::backend::cpu
