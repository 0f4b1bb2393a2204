// CPU reduction kernel: sum, max/min (with indices) and argmax/argmin over
// one dim of a contiguous tensor, seen as [outer, R, inner].
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/reduction_shape.h"

namespace tandem::backend::cpu {
namespace {

template <typename T>
void sum_typed(const Tensor& out, const Tensor& in, const ReductionShape& g) {
  using A = sum_acc_t<T>;
  using O = sum_out_t<T>;
  const T* src = in.data_ptr<T>();
  O* dst = out.data_ptr<O>();
  std::vector<A> acc(g.inner);
  for (int64_t o = 0; o < g.outer; ++o) {
    std::fill(acc.begin(), acc.end(), A(0));
    const T* block = src + o * g.reduced * g.inner;
    for (int64_t r = 0; r < g.reduced; ++r) {
      const T* row = block + r * g.inner;
      for (int64_t i = 0; i < g.inner; ++i) acc[i] += static_cast<A>(row[i]);
    }
    for (int64_t i = 0; i < g.inner; ++i) dst[o * g.inner + i] = static_cast<O>(acc[i]);
  }
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
  T* vdst = values.defined() ? values.data_ptr<T>() : nullptr;
  int64_t* idst = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  std::vector<T> best(g.inner);
  std::vector<int64_t> where(g.inner);
  for (int64_t o = 0; o < g.outer; ++o) {
    const T* block = src + o * g.reduced * g.inner;
    std::copy(block, block + g.inner, best.begin());
    std::fill(where.begin(), where.end(), 0);
    for (int64_t r = 1; r < g.reduced; ++r) {
      const T* row = block + r * g.inner;
      for (int64_t i = 0; i < g.inner; ++i) {
        if (better<T, IsMax>(row[i], best[i])) {
          best[i] = row[i];
          where[i] = r;
        }
      }
    }
    if (vdst) std::copy(best.begin(), best.end(), vdst + o * g.inner);
    if (idst) std::copy(where.begin(), where.end(), idst + o * g.inner);
  }
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
    dispatch_dtype(in.dtype(), [&]<typename T>() { sum_typed<T>(out, in, g); });
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
