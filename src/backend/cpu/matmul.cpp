// CPU matrix products through CBLAS (OpenBLAS). Every product tandem
// computes goes through this file; blas_setup.cpp prepares the library.
//
// Note [GEMM blocks]
// ~~~~~~~~~~~~~~~~~~
// Debian's OpenBLAS (pthread build) has one process-wide thread count, so
// concurrent callers with more than one thread each serialise in its thread
// server (research/baselines.md, section 3). tandem sets it to 1
// (blas_setup.cpp) and parallelises each product itself: the output is cut
// into blocks along its longer side, each block is one single-threaded BLAS
// call over the full K, and parallel_for hands the blocks to
// intra_op_threads() threads, which is the calling device's share of the
// cores.
//
// The cut depends only on the shape and the machine's core count, never on
// the core budget or on how many devices are busy. OpenBLAS picks different
// kernels for different block sizes (small-matrix and gemv paths) that round
// differently: with 0.3.21, a 256x10x1024 product cut into 16-row blocks
// differs from one call in the last bits. A cut that followed the thread
// count would make results depend on it, and replicas on busy devices would
// disagree with one device that works alone.
#include <cblas.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <thread>

#include "backend/cpu/blas_setup.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/loops.h"
#include "tandem/core/cpu_budget.h"

namespace tandem::backend::cpu {
namespace {

// A block spans whole OpenBLAS micro-tiles (SkylakeX sgemm unrolls M by 16)
// and at least 64 rows or columns: every block repacks the other operand,
// which costs about 1/extent of the block's time.
constexpr int64_t kBlockAlign = 16;
constexpr int64_t kMinBlockExtent = 64;
// Multiply-adds below which a block is not worth waking a thread for
// (about 15 us on one core).
constexpr double kMinBlockWork = 1 << 20;

struct Blocks {
  bool by_rows;    // cut the output's rows (else its columns)
  int64_t extent;  // rows or columns per block (the last one may be short)
  int64_t count;
};

Blocks plan_blocks(int64_t m, int64_t n, int64_t k) {
  // Cutting rows repacks B in every block and cutting columns repacks A, so
  // the longer side is cut: the repacked operand is the smaller one.
  const bool by_rows = m >= n;
  const int64_t side = by_rows ? m : n;
  const double work = static_cast<double>(m) * static_cast<double>(n) * k;
  int64_t count = max_parallel_blocks();
  while (count > 1 && (work / count < kMinBlockWork || side / count < kMinBlockExtent)) {
    count /= 2;
  }
  const int64_t extent = (side + count - 1) / count;
  const int64_t aligned = (extent + kBlockAlign - 1) / kBlockAlign * kBlockAlign;
  const int64_t step = count == 1 ? side : aligned;
  return {by_rows, step, (side + step - 1) / step};
}

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
Matrices<T> matrices(const Tensor& t) {
  const int64_t d = t.dim();
  return {t.data_ptr<T>(), d == 3 ? t.stride(0) : 0, t.stride(d - 2), t.stride(d - 1)};
}

// c = alpha * a * b + beta * c for one m x n block; c's rows are ldc apart.
template <typename T>
void gemm_block(int64_t m,
                int64_t n,
                int64_t k,
                T alpha,
                const T* a,
                Operand oa,
                const T* b,
                Operand ob,
                T beta,
                T* c,
                int64_t ldc) {
  const auto gemm = [] {
    if constexpr (std::is_same_v<T, float>) {
      return &cblas_sgemm;
    } else {
      return &cblas_dgemm;
    }
  }();
  gemm(CblasRowMajor,
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
       to_blas_int(ldc));
}

// c = beta * c when there is nothing to multiply (k == 0); BLAS is not
// asked, and beta == 0 overwrites (c may be uninitialised).
template <typename T>
void scale(T* c, int64_t count, T beta) {
  for (int64_t i = 0; i < count; ++i) c[i] = beta == T(0) ? T(0) : beta * c[i];
}

}  // namespace

// At most this many blocks per product: enough to give every core of the
// machine one (a power of two, so blocks split evenly among 2^i threads).
int64_t max_parallel_blocks() {
  static const int64_t n = static_cast<int64_t>(
      std::bit_ceil(std::max(1u, std::min(std::thread::hardware_concurrency(), 256u))));
  return n;
}

// Every (matrix, block) pair is one unit of parallel work (Note [GEMM blocks]).
template <typename T>
void blocked_gemm(int64_t batch,
                  int64_t m,
                  int64_t n,
                  int64_t k,
                  T alpha,
                  Matrices<T> a,
                  Matrices<T> b,
                  T beta,
                  T* c,
                  bool parallel) {
  if (batch == 0 || m == 0 || n == 0) return;
  if (k == 0) return scale(c, batch * m * n, beta);
  prepare_blas();
  const Blocks blocks = plan_blocks(m, n, k);
  const double block_work =
      static_cast<double>(blocks.extent) * (blocks.by_rows ? n : m) * k;
  const auto grain = static_cast<int64_t>(std::max(1.0, kMinBlockWork / block_work));
  const auto run = [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t i = unit / blocks.count;
      const int64_t first = unit % blocks.count * blocks.extent;
      const T* pa = a.data + i * a.batch;
      const T* pb = b.data + i * b.batch;
      T* pc = c + i * m * n;
      if (blocks.by_rows) {
        const int64_t rows = std::min(blocks.extent, m - first);
        gemm_block<T>(rows,
                      n,
                      k,
                      alpha,
                      pa + first * a.s0,
                      operand(rows, k, a.s0, a.s1),
                      pb,
                      operand(k, n, b.s0, b.s1),
                      beta,
                      pc + first * n,
                      n);
      } else {
        const int64_t cols = std::min(blocks.extent, n - first);
        gemm_block<T>(m,
                      cols,
                      k,
                      alpha,
                      pa,
                      operand(m, k, a.s0, a.s1),
                      pb + first * b.s1,
                      operand(k, cols, b.s0, b.s1),
                      beta,
                      pc + first,
                      n);
      }
    }
  };
  if (parallel) {
    parallel_for(0, batch * blocks.count, grain, run);
  } else {
    run(0, batch * blocks.count);
  }
}

template void blocked_gemm<float>(int64_t,
                                  int64_t,
                                  int64_t,
                                  int64_t,
                                  float,
                                  Matrices<float>,
                                  Matrices<float>,
                                  float,
                                  float*,
                                  bool);
template void blocked_gemm<double>(int64_t,
                                   int64_t,
                                   int64_t,
                                   int64_t,
                                   double,
                                   Matrices<double>,
                                   Matrices<double>,
                                   double,
                                   double*,
                                   bool);

void gemm(
    const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  dispatch_floating(out.dtype(), "gemm", [&]<typename T>() {
    blocked_gemm<T>(1,
                    m,
                    n,
                    k,
                    static_cast<T>(alpha),
                    matrices<T>(a),
                    matrices<T>(b),
                    static_cast<T>(beta),
                    out.data_ptr<T>());
  });
}

void bmm(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t batch = a.size(0), m = a.size(1), k = a.size(2), n = b.size(2);
  dispatch_floating(out.dtype(), "bmm", [&]<typename T>() {
    // Batch strides may be 0 (a broadcast operand is read, not copied).
    blocked_gemm<T>(
        batch, m, n, k, T(1), matrices<T>(a), matrices<T>(b), T(0), out.data_ptr<T>());
  });
}

}  // namespace tandem::backend::cpu
