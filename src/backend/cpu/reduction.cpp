// CPU reduction kernel: sum, max/min (with indices) and argmax/argmin over
// one dim of a contiguous tensor, seen as [outer, R, inner], spread over
// threads without changing a bit (Note [Reductions on threads]).
#include <algorithm>
#include <array>
#include <cmath>
#include <type_traits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/reduction_shape.h"

namespace tandem::backend::cpu {
namespace {

// Note [Reductions on threads]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Results must not depend on the thread count, so threads split only
// independent work: the outputs (the columns of a dim-0 sum, the rows of a
// sum over the last dim), each reduced by one task in order r = 0, 1, ...
// A row longer than kSumChunk (a sum to a scalar) is summed in chunks of
// kSumChunk elements, each in order, whose partial sums are then added left
// to right: the chunks, not the threads, fix the order, so one thread and
// eight give the same bits, and a row that fits in one chunk sums exactly
// as a plain loop does.
constexpr int64_t kSumChunk = int64_t{1} << 15;

// Chunk partials of one row kept at once, on the stack (a block covers 2M
// elements; longer rows take several blocks, added in the same order).
constexpr int64_t kPartials = 64;

// Outputs reduced side by side, their accumulators on the stack.
constexpr int64_t kTile = 256;

// Calls block(o, i0, i1) for the outputs [o, i] with i in [i0, i1), at most
// kTile of them, every output once, spread over threads; each output
// reduces g.reduced elements.
template <typename Block>
void for_each_output_block(const ReductionShape& g, Block&& block) {
  parallel_over(g.outer * g.inner, g.reduced, [&](int64_t begin, int64_t end) {
    for (int64_t at = begin; at < end;) {
      const int64_t o = at / g.inner, i = at % g.inner;
      const int64_t n = std::min({g.inner - i, end - at, kTile});
      block(o, i, i + n);
      at += n;
    }
  });
}

// Sums over the middle dim when the reduced elements are `inner` apart:
// rows of contiguous outputs accumulate side by side.
template <typename T>
void sum_columns(const Tensor& out, const Tensor& in, const ReductionShape& g) {
  using A = sum_acc_t<T>;
  using O = sum_out_t<T>;
  const T* src = in.data_ptr<T>();
  O* dst = out.data_ptr<O>();
  for_each_output_block(g, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t n = i1 - i0;
    std::array<A, kTile> acc;
    std::fill_n(acc.begin(), n, A(0));
    const T* block = src + o * g.reduced * g.inner + i0;
    for (int64_t r = 0; r < g.reduced; ++r) {
      const T* row = block + r * g.inner;
      for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<A>(row[i]);
    }
    for (int64_t i = 0; i < n; ++i) dst[o * g.inner + i0 + i] = static_cast<O>(acc[i]);
  });
}

// Sums over the last dim (inner == 1): rows of contiguous elements, cut
// into chunks. Rows go to threads whole; a single row's chunks go to
// threads instead. See Note [Reductions on threads].
template <typename T>
void sum_rows(const Tensor& out, const Tensor& in, const ReductionShape& g) {
  using A = sum_acc_t<T>;
  using O = sum_out_t<T>;
  const T* src = in.data_ptr<T>();
  O* dst = out.data_ptr<O>();
  const int64_t chunks = std::max<int64_t>(1, (g.reduced + kSumChunk - 1) / kSumChunk);
  auto chunk_sum = [&](const T* row, int64_t c) {
    const T* x = row + c * kSumChunk;
    const int64_t n = std::min(kSumChunk, g.reduced - c * kSumChunk);
    A total = 0;
    for (int64_t j = 0; j < n; ++j) total += static_cast<A>(x[j]);
    return total;
  };
  auto row_sum = [&](const T* row) {
    A total = 0;
    for (int64_t first = 0; first < chunks; first += kPartials) {
      const int64_t n = std::min(kPartials, chunks - first);
      std::array<A, kPartials> partial;
      parallel_over(n, kSumChunk, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) partial[c] = chunk_sum(row, first + c);
      });
      for (int64_t c = 0; c < n; ++c)
        total = first + c == 0 ? partial[0] : total + partial[c];
    }
    return total;
  };
  parallel_over(g.outer, g.reduced, [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      dst[o] = static_cast<O>(row_sum(src + o * g.reduced));
    }
  });
}

// Whether `v` replaces `best`: strictly better, so ties keep the first
// index; NaN beats everything, so it propagates as in PyTorch.
template <typename T, bool IsMax>
bool better(T v, T best) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(v)) return !std::isnan(best);
    if (std::isnan(best)) return false;
  }
  return IsMax ? v > best : v < best;
}

template <typename T, bool IsMax>
void extremum_typed(const Tensor& values,
                    const Tensor& indices,
                    const Tensor& in,
                    const ReductionShape& g) {
  const T* src = in.data_ptr<T>();
  T* vdst = data_or_null<T>(values);
  int64_t* idst = data_or_null<int64_t>(indices);
  for_each_output_block(g, [&](int64_t o, int64_t i0, int64_t i1) {
    const int64_t n = i1 - i0;
    const T* block = src + o * g.reduced * g.inner + i0;
    std::array<T, kTile> best;
    std::array<int64_t, kTile> where;
    std::fill_n(where.begin(), n, 0);
    std::copy_n(block, n, best.begin());
    for (int64_t r = 1; r < g.reduced; ++r) {
      const T* row = block + r * g.inner;
      for (int64_t i = 0; i < n; ++i) {
        if (better<T, IsMax>(row[i], best[i])) {
          best[i] = row[i];
          where[i] = r;
        }
      }
    }
    if (vdst) std::copy_n(best.begin(), n, vdst + o * g.inner + i0);
    if (idst) std::copy_n(where.begin(), n, idst + o * g.inner + i0);
  });
}

}  // namespace

void reduce_dim(ReduceOp op,
                const Tensor& out,
                const Tensor& indices,
                const Tensor& in,
                int64_t dim) {
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(in.is_contiguous() && out.is_contiguous(),
                                    "reduce_dim: expected contiguous operands");
  const ReductionShape g = reduction_shape(in, dim);
  if (g.outer * g.inner == 0) return;
  if (op == ReduceOp::Sum) {
    dispatch_dtype(in.dtype(), [&]<typename T>() {
      if (g.inner == 1) {
        sum_rows<T>(out, in, g);
      } else {
        sum_columns<T>(out, in, g);
      }
    });
    return;
  }
  TANDEM_INTERNAL_ASSERT(g.reduced > 0, "reduce_dim: max/min over an empty dim");
  const bool arg = op == ReduceOp::ArgMax || op == ReduceOp::ArgMin;
  Tensor values = arg ? Tensor() : out;
  Tensor where = arg ? out : indices;
  dispatch_dtype(in.dtype(), [&]<typename T>() {
    if (op == ReduceOp::Max || op == ReduceOp::ArgMax) {
      extremum_typed<T, true>(values, where, in, g);
    } else {
      extremum_typed<T, false>(values, where, in, g);
    }
  });
}

}  // namespace tandem::backend::cpu
