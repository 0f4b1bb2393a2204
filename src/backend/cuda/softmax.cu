// CUDA softmax / log_softmax, forward and backward, over dim 1 of a
// contiguous [rows, n] or [outer, n, inner] tensor (the CPU kernel's
// contract and results; see backend/cpu/softmax.cpp).
//
// A row is n elements `inner` apart. One kernel template runs a row
// function over every row with a group of threads per row:
//   - inner == 1, n <= kWarpRowMax: a warp per row;
//   - inner == 1, longer rows: a block per row;
//   - inner > 1: a thread per row (neighbouring threads take neighbouring
//     rows, whose elements are adjacent, so loads coalesce).
// Softmax reads a row twice: once for its maximum and sum together (an
// online update that rescales the sum when the maximum grows), once to
// write; the backward reads it twice too (sum, write).
//
// Accumulation, as on the CPU: the row maximum stays in T; row sums (of
// exp, of g*y, of g) accumulate in double for float32 too, which costs
// nothing visible next to the exp per element. exp(x - max) is computed in
// T as on the CPU, against the running maximum, and rescaled in double.
#include <cmath>
#include <limits>

#include "backend/cuda/block_reduce.cuh"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

// [outer, n, inner] geometry of a 2-D or 3-D contiguous kernel operand.
struct RowGeometry {
  int64_t outer, n, inner;
  explicit RowGeometry(const Tensor& t)
      : outer(t.sizes()[0]), n(t.sizes()[1]), inner(t.dim() == 3 ? t.sizes()[2] : 1) {
    TANDEM_INTERNAL_ASSERT(t.dim() == 2 || t.dim() == 3,
                           "softmax kernel: expected a 2-D or 3-D operand, got ",
                           t.sizes());
  }
};

// ---- groups of threads sharing a row: the lane, the count, a reduction ----

struct ThreadGroup {
  __device__ int64_t lane() const { return 0; }
  __device__ int64_t size() const { return 1; }
  template <typename T, typename Op>
  __device__ T reduce(T v, Op) const {
    return v;
  }
};

struct WarpGroup {
  __device__ int64_t lane() const { return threadIdx.x % kWarpSize; }
  __device__ int64_t size() const { return kWarpSize; }
  template <typename T, typename Op>
  __device__ T reduce(T v, Op op) const {
    return warp_reduce(v, op);
  }
};

struct BlockGroup {
  double2* scratch;  // __shared__, 32 x 16 bytes: room for 32 of any T used here
  __device__ int64_t lane() const { return threadIdx.x; }
  __device__ int64_t size() const { return blockDim.x; }
  template <typename T, typename Op>
  __device__ T reduce(T v, Op op) const {
    static_assert(sizeof(T) <= sizeof(double2));
    return block_reduce(v, op, reinterpret_cast<T*>(scratch));
  }
};

enum class RowsPer { Thread, Warp, Block };

struct Plus {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};

// std::max's choice (a NaN element never becomes the maximum; it turns the
// row's sum, hence the whole row, into NaN, as on the CPU).
struct Max {
  template <typename T>
  __device__ T operator()(T a, T b) const {
    return a < b ? b : a;
  }
};

// A running maximum of some elements and the sum of exp(x - max) over
// them, so that one pass over a row finds both. Elements equal to -inf add
// nothing (exp(-inf - max) = 0), which keeps -inf - -inf = NaN out of the
// sum; a row of only -inf ends with max = -inf and sum = 0, and its output
// is NaN, as on the CPU. A NaN element makes the sum NaN.
template <typename T>
struct MaxSum {
  T max;
  double sum;
};

// exp(from - to) for from <= to, exactly 1 when they are equal (also for
// two -inf).
template <typename T>
__device__ __forceinline__ double rescale(T from, T to) {
  return from == to ? 1.0 : std::exp(static_cast<double>(from) - static_cast<double>(to));
}

template <typename T>
__device__ __forceinline__ MaxSum<T> add(MaxSum<T> a, T x) {
  // exp(x - x) is 1, or NaN for x = +inf, as the CPU's term for its maximum.
  if (x > a.max) return {x, a.sum * rescale(a.max, x) + std::exp(x - x)};
  if (x != -std::numeric_limits<T>::infinity()) a.sum += std::exp(x - a.max);
  return a;
}

struct CombineMaxSum {
  template <typename T>
  __device__ MaxSum<T> operator()(MaxSum<T> a, MaxSum<T> b) const {
    const T max = Max()(a.max, b.max);
    return {max, a.sum * rescale(a.max, max) + b.sum * rescale(b.max, max)};
  }
};

template <typename T>
__device__ __forceinline__ MaxSum<T> shfl_xor(MaxSum<T> v, int mask) {
  return {cuda::shfl_xor(v.max, mask), cuda::shfl_xor(v.sum, mask)};
}

// Calls f(j, load(j)) for the group's share of j in [0, n), loading
// kUnroll elements before using them, so that kUnroll loads per array are
// in flight per thread.
constexpr int kUnroll = 4;

template <typename Group, typename Load, typename F>
__device__ __forceinline__ void for_each_element(const Group& g,
                                                 int64_t n,
                                                 const Load& load,
                                                 const F& f) {
  const int64_t step = g.size();
  int64_t j = g.lane();
  for (; j + (kUnroll - 1) * step < n; j += kUnroll * step) {
    decltype(load(j)) v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load(j + u * step);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) f(j + u * step, v[u]);
  }
  for (; j < n; j += step) f(j, load(j));
}

// ---- the row functions: (group, offset of the row's first element, n,
// stride) ----

template <typename T>
struct SoftmaxForward {
  T* out;
  const T* in;
  bool is_log;

  template <typename Group>
  __device__ void operator()(const Group& g,
                             int64_t at,
                             int64_t n,
                             int64_t stride) const {
    const T* x = in + at;
    T* y = out + at;
    const auto load = [=](int64_t j) { return x[j * stride]; };
    MaxSum<T> ms{-std::numeric_limits<T>::infinity(), 0.0};
    for_each_element(g, n, load, [&](int64_t, T v) { ms = add(ms, v); });
    ms = g.reduce(ms, CombineMaxSum());
    const T max = ms.max;
    if (is_log) {
      // log_softmax = x - logsumexp(x), with logsumexp = max + log(sum).
      const double shift = static_cast<double>(max) + std::log(ms.sum);
      for_each_element(
          g, n, load, [=](int64_t j, T v) { y[j * stride] = static_cast<T>(v - shift); });
      return;
    }
    const T scale = static_cast<T>(1.0 / ms.sum);
    for_each_element(g, n, load, [=](int64_t j, T v) {
      y[j * stride] = static_cast<T>(std::exp(v - max)) * scale;
    });
  }
};

template <typename T>
struct SoftmaxBackward {
  struct Pair {
    T g, y;
  };
  T* grad_in;
  const T* grad_out;
  const T* result;
  bool is_log;

  template <typename Group>
  __device__ void operator()(const Group& g,
                             int64_t at,
                             int64_t n,
                             int64_t stride) const {
    const T* go = grad_out + at;
    const T* y = result + at;
    T* gi = grad_in + at;
    // (g, y) pairs; the sum needs y only for softmax.
    const auto load = [=](int64_t j) { return Pair{go[j * stride], y[j * stride]}; };
    double sum = 0;
    if (is_log) {
      for_each_element(
          g,
          n,
          [=](int64_t j) { return go[j * stride]; },
          [&](int64_t, T v) { sum += v; });
    } else {
      for_each_element(
          g, n, load, [&](int64_t, Pair p) { sum += static_cast<double>(p.g) * p.y; });
    }
    sum = g.reduce(sum, Plus());
    // log: g - softmax(x) * sum(g), softmax(x) = exp(y); else y * (g - sum(g * y)).
    const bool from_log = is_log;  // captured by value, unlike `this`
    for_each_element(g, n, load, [=](int64_t j, Pair p) {
      gi[j * stride] = from_log ? static_cast<T>(p.g - std::exp(p.y) * sum)
                                : static_cast<T>(p.y * (p.g - sum));
    });
  }
};

// The most threads of a block (for a long row): 128 registers a thread.
constexpr int kMaxRowThreads = 512;

// Runs `row` over every row of g, `Per` deciding how many threads share a
// row. Grid-stride over rows, uniform per group.
template <RowsPer Per, typename Row>
__global__ void __launch_bounds__(kMaxRowThreads) rows_kernel(Row row, RowGeometry g) {
  __shared__ double2 scratch[kWarpSize];
  const int64_t per_block = Per == RowsPer::Thread ? blockDim.x
                            : Per == RowsPer::Warp ? blockDim.x / kWarpSize
                                                   : 1;
  const int64_t local = Per == RowsPer::Thread ? threadIdx.x
                        : Per == RowsPer::Warp ? threadIdx.x / kWarpSize
                                               : 0;
  const int64_t rows = g.outer * g.inner;
  for (int64_t r = blockIdx.x * per_block + local; r < rows;
       r += static_cast<int64_t>(gridDim.x) * per_block) {
    if constexpr (Per == RowsPer::Thread) {
      row(ThreadGroup{}, (r / g.inner) * g.n * g.inner + r % g.inner, g.n, g.inner);
    } else if constexpr (Per == RowsPer::Warp) {
      row(WarpGroup{}, r * g.n, g.n, 1);
    } else {
      row(BlockGroup{scratch}, r * g.n, g.n, 1);
    }
  }
}

// Rows up to this long get a warp each; longer ones a block.
constexpr int64_t kWarpRowMax = 1024;

template <typename Row>
void launch_rows(const Row& row, const RowGeometry& g, cudaStream_t stream) {
  const int64_t rows = g.outer * g.inner;
  if (rows == 0 || g.n == 0) return;
  if (g.inner > 1) {
    rows_kernel<RowsPer::Thread><<<blocks_for(rows), kThreads, 0, stream>>>(row, g);
  } else if (g.n <= kWarpRowMax) {
    rows_kernel<RowsPer::Warp>
        <<<blocks_for(rows * kWarpSize), kThreads, 0, stream>>>(row, g);
  } else {
    const int threads = g.n > 4 * kWarpRowMax ? kMaxRowThreads : kThreads;
    rows_kernel<RowsPer::Block>
        <<<blocks_for(rows * threads, threads), threads, 0, stream>>>(row, g);
  }
  TANDEM_CUDA_CHECK_LAUNCH("softmax rows_kernel");
}

template <typename T>
void softmax_typed(const Tensor& out, const Tensor& in, bool log, cudaStream_t stream) {
  launch_rows(SoftmaxForward<T>{out.data_ptr<T>(), in.data_ptr<T>(), log},
              RowGeometry(in),
              stream);
}

template <typename T>
void softmax_backward_typed(const Tensor& grad_in,
                            const Tensor& grad_out,
                            const Tensor& result,
                            bool log,
                            cudaStream_t stream) {
  launch_rows(
      SoftmaxBackward<T>{
          grad_in.data_ptr<T>(), grad_out.data_ptr<T>(), result.data_ptr<T>(), log},
      RowGeometry(result),
      stream);
}

}  // namespace

void softmax(const Tensor& out, const Tensor& in, bool log) {
  cudaStream_t stream = prepare(out);
  dispatch_floating(in.dtype(), "softmax", [&]<typename T>() {
    softmax_typed<T>(out, in, log, stream);
  });
}

void softmax_backward(const Tensor& grad_in,
                      const Tensor& grad_out,
                      const Tensor& result,
                      bool log) {
  cudaStream_t stream = prepare(grad_in);
  dispatch_floating(result.dtype(), "softmax_backward", [&]<typename T>() {
    softmax_backward_typed<T>(grad_in, grad_out, result, log, stream);
  });
}

}  // namespace tandem::backend::cuda
