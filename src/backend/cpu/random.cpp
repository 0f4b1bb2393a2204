// CPU random fills. Each fill holds the generator's lock for its whole run,
// so a tensor's values are one contiguous stretch of the stream and a seed
// reproduces them whatever other threads do.
#include <cmath>
#include <random>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/philox.h"

namespace tandem::backend::cpu {
namespace {

// 53 random bits -> [0, 1) in double; 24 bits -> [0, 1) in float.
double uniform01(std::mt19937_64& e) {
  return static_cast<double>(e() >> 11) * 0x1.0p-53;
}

template <typename T, typename Draw>
void fill_random(const Tensor& out, Generator& gen, Draw draw) {
  auto guard = gen.lock();
  auto& engine = gen.engine();
  elementwise<T>(out, [&]() -> T { return static_cast<T>(draw(engine)); });
}

}  // namespace

void uniform(const Tensor& out, double from, double to, Generator& gen) {
  dispatch_floating(out.dtype(), "uniform_", [&]<typename T>() {
    fill_random<T>(out, gen, [&](std::mt19937_64& e) {
      T v = static_cast<T>(from + (to - from) * uniform01(e));
      // Rounding to float can land on `to`; keep the interval half-open.
      return v < static_cast<T>(to) || from == to ? v : static_cast<T>(from);
    });
  });
}

void normal(const Tensor& out, double mean, double std, Generator& gen) {
  dispatch_floating(out.dtype(), "normal_", [&]<typename T>() {
    // Box-Muller; the second value of each pair is kept for the next draw.
    bool have_spare = false;
    double spare = 0;
    fill_random<T>(out, gen, [&](std::mt19937_64& e) {
      if (have_spare) {
        have_spare = false;
        return mean + std * spare;
      }
      double u1 = 1.0 - uniform01(e);  // (0, 1]: log is finite
      double u2 = uniform01(e);
      double r = std::sqrt(-2.0 * std::log(u1));
      spare = r * std::sin(2 * M_PI * u2);
      have_spare = true;
      return mean + std * r * std::cos(2 * M_PI * u2);
    });
  });
}

void randint(const Tensor& out, int64_t low, int64_t high, Generator& gen) {
  const auto range = static_cast<uint64_t>(high - low);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    fill_random<T>(out, gen, [&](std::mt19937_64& e) {
      // Rejection sampling keeps every value equally likely.
      const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
      uint64_t v = e();
      while (v >= limit) v = e();
      return low + static_cast<int64_t>(v % range);
    });
  });
}

void bernoulli(const Tensor& out, double p, Generator& gen) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    fill_random<T>(
        out, gen, [&](std::mt19937_64& e) { return uniform01(e) < p ? 1 : 0; });
  });
}

// Note [Sample-keyed masks]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Invariant mode (nn::DataParallelOptions::invariant) must draw the same
// dropout mask for a sample whichever device, micro-batch or thread
// computes it. A stream read in order (the generator above) cannot: the
// numbers a row gets depend on how many rows came before it in the call.
// So these masks are counter-based: element (o, r, i) of a tensor seen as
// [outer, rows, inner] around its sample dim takes word c % 4 of the
// Philox block c / 4 under the call's key, with c = ((first_row + r) *
// outer + o) * inner + i (sample_keyed_index): a pure function of the key,
// the sample's index in the whole batch and the element's place in that
// sample. The CUDA kernel computes the same formula, so a CPU and a GPU
// draw the same mask.
void bernoulli_keyed(
    const Tensor& out, double p, uint64_t key, int64_t first_row, int64_t dim) {
  TANDEM_INTERNAL_ASSERT(out.is_contiguous(), "bernoulli_keyed: out must be contiguous");
  const int64_t rows = out.size(dim);
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.size(d);
  const int64_t inner = rows == 0 || outer == 0 ? 1 : out.numel() / (outer * rows);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    T* data = out.data_ptr<T>();
    // Philox costs ~10 cheap operations per element (a block serves four).
    parallel_over(out.numel(), 10, [&](int64_t begin, int64_t end) {
      uint64_t cached = UINT64_MAX;
      PhiloxBlock block{};
      for (int64_t e = begin; e < end; ++e) {
        const int64_t i = e % inner;
        const int64_t r = (e / inner) % rows;
        const int64_t o = e / (inner * rows);
        const uint64_t c = sample_keyed_index(o, first_row + r, i, outer, inner);
        if (c / 4 != cached) {
          cached = c / 4;
          block = philox(counter_of(cached), key);
        }
        data[e] = keyed_bernoulli(block, c, p) ? T(1) : T(0);
      }
    });
  });
}

}  // namespace tandem::backend::cpu
