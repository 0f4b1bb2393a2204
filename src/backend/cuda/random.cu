// CUDA random fills, counter-based: each fill takes one 64-bit key from the
// tandem Generator (under its lock) and element i (row-major) takes its bits
// from Philox block i / 2 under that key, the first or second 64 bits by
// i % 2. A seed thus reproduces a tensor whatever the launch shape, and
// the generator advances by one draw per fill. The values follow the CPU
// kernels' distributions, though not the CPU's stream.
#include <cmath>
#include <cstdint>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/philox.h"
#include "core/empty_tensor.h"

namespace tandem::backend::cuda {
namespace {

/// The first (half 0) or second 64 bits of a block.
__device__ __forceinline__ uint64_t half_bits(const PhiloxBlock& r, int half) {
  return join64(r.w[2 * half], r.w[2 * half + 1]);
}

// Pair j of out's elements gets block j: draw(block, j, key, v) writes both
// values of the pair to v[0] and v[1].
template <typename T, typename Draw>
__global__ void random_kernel(T* out, int64_t n, uint64_t key, Draw draw) {
  const int64_t pairs = (n + 1) / 2;
  for (int64_t j = grid_index(); j < pairs; j += grid_stride()) {
    T v[2];
    draw(philox(counter_of(j), key), j, key, v);
    out[2 * j] = v[0];
    if (2 * j + 1 < n) out[2 * j + 1] = v[1];
  }
}

template <typename T, typename Draw>
void fill_random(const Tensor& out, Generator& gen, const Draw& draw) {
  cudaStream_t stream = prepare(out);
  const int64_t n = out.numel();
  if (n == 0) return;
  if (!out.is_contiguous()) {
    // Element i is the i-th in row-major order: fill a contiguous tensor,
    // then scatter it into out's layout.
    Tensor dense = detail::make_empty(out.sizes(), out.dtype(), out.device());
    fill_random<T>(dense, gen, draw);
    cuda::copy(out, dense);
    return;
  }
  uint64_t key = 0;
  {
    auto lock = gen.lock();
    key = gen.engine()();
  }
  random_kernel<<<blocks_for((n + 1) / 2), kThreads, 0, stream>>>(
      out.data_ptr<T>(), n, key, draw);
  TANDEM_CUDA_CHECK_LAUNCH("random fill");
}

template <typename T>
void uniform_typed(const Tensor& out, double from, double to, Generator& gen) {
  fill_random<T>(
      out, gen, [from, to] __device__(const PhiloxBlock& r, int64_t, uint64_t, T* v) {
        for (int half = 0; half < 2; ++half) {
          const T x = static_cast<T>(from + (to - from) * uniform01(half_bits(r, half)));
          // Rounding to float can land on `to`; keep the interval half-open.
          v[half] = x < static_cast<T>(to) || from == to ? x : static_cast<T>(from);
        }
      });
}

template <typename T>
void normal_typed(const Tensor& out, double mean, double std, Generator& gen) {
  fill_random<T>(
      out, gen, [mean, std] __device__(const PhiloxBlock& r, int64_t, uint64_t, T* v) {
        // Box-Muller: one block gives both values of the pair.
        const double u1 = 1.0 - uniform01(half_bits(r, 0));  // (0, 1]: log is finite
        const double u2 = uniform01(half_bits(r, 1));
        const double radius = sqrt(-2.0 * log(u1));
        double s = 0, c = 0;
        sincospi(2.0 * u2, &s, &c);
        v[0] = static_cast<T>(mean + std * radius * c);
        v[1] = static_cast<T>(mean + std * (radius * s));
      });
}

template <typename T>
void randint_typed(const Tensor& out, int64_t low, int64_t high, Generator& gen) {
  const auto range = static_cast<uint64_t>(high - low);
  // Rejection sampling keeps every value equally likely; a rejected value
  // is redrawn from the same index's block under the next stream word.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  fill_random<T>(out,
                 gen,
                 [low, range, limit] __device__(
                     const PhiloxBlock& r, int64_t j, uint64_t key, T* v) {
                   for (int half = 0; half < 2; ++half) {
                     uint64_t bits = half_bits(r, half);
                     for (uint32_t attempt = 1; bits >= limit; ++attempt) {
                       bits = half_bits(philox(counter_of(j, attempt), key), half);
                     }
                     v[half] = static_cast<T>(low + static_cast<int64_t>(bits % range));
                   }
                 });
}

template <typename T>
void bernoulli_typed(const Tensor& out, double p, Generator& gen) {
  fill_random<T>(out, gen, [p] __device__(const PhiloxBlock& r, int64_t, uint64_t, T* v) {
    for (int half = 0; half < 2; ++half) {
      v[half] = static_cast<T>(uniform01(half_bits(r, half)) < p ? 1 : 0);
    }
  });
}

template <typename T>
__global__ void bernoulli_keyed_kernel(T* out,
                                       int64_t n,
                                       double p,
                                       uint64_t key,
                                       int64_t first_row,
                                       int64_t rows,
                                       int64_t outer,
                                       int64_t inner) {
  for (int64_t e = grid_index(); e < n; e += grid_stride()) {
    const int64_t i = e % inner;
    const int64_t r = (e / inner) % rows;
    const int64_t o = e / (inner * rows);
    const uint64_t c = sample_keyed_index(o, first_row + r, i, outer, inner);
    out[e] =
        static_cast<T>(keyed_bernoulli(philox(counter_of(c / 4), key), c, p) ? 1 : 0);
  }
}

}  // namespace

void uniform(const Tensor& out, double from, double to, Generator& gen) {
  dispatch_floating(out.dtype(), "uniform_", [&]<typename T>() {
    uniform_typed<T>(out, from, to, gen);
  });
}

void normal(const Tensor& out, double mean, double std, Generator& gen) {
  dispatch_floating(out.dtype(), "normal_", [&]<typename T>() {
    normal_typed<T>(out, mean, std, gen);
  });
}

void randint(const Tensor& out, int64_t low, int64_t high, Generator& gen) {
  dispatch_dtype(out.dtype(),
                 [&]<typename T>() { randint_typed<T>(out, low, high, gen); });
}

void bernoulli(const Tensor& out, double p, Generator& gen) {
  dispatch_dtype(out.dtype(), [&]<typename T>() { bernoulli_typed<T>(out, p, gen); });
}

// The CPU kernel's formula (Note [Sample-keyed masks] in
// backend/cpu/random.cpp), one element a thread.
void bernoulli_keyed(
    const Tensor& out, double p, uint64_t key, int64_t first_row, int64_t dim) {
  cudaStream_t stream = prepare(out);
  const int64_t n = out.numel();
  if (n == 0) return;
  const int64_t rows = out.size(dim);
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.size(d);
  const int64_t inner = n / (outer * rows);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    bernoulli_keyed_kernel<<<blocks_for(n), kThreads, 0, stream>>>(
        out.data_ptr<T>(), n, p, key, first_row, rows, outer, inner);
  });
  TANDEM_CUDA_CHECK_LAUNCH("sample-keyed bernoulli");
}

}  // namespace tandem::backend::cuda
