// Private: how every reduction kernel (CPU and CUDA) sees its operand and
// what types it sums in: a contiguous tensor reduced over `dim` is
// [outer, reduced, inner].
#pragma once

#include <cstdint>
#include <type_traits>

#include "tandem/core/tensor.h"

namespace tandem::backend {

struct ReductionShape {
  int64_t outer = 1, reduced = 1, inner = 1;
};

inline ReductionShape reduction_shape(const Tensor& in, int64_t dim) {
  ReductionShape g;
  for (int64_t d = 0; d < in.dim(); ++d) {
    const int64_t s = in.sizes()[d];
    if (d < dim)
      g.outer *= s;
    else if (d == dim)
      g.reduced = s;
    else
      g.inner *= s;
  }
  return g;
}

// float32 sums accumulate in double: a float accumulator loses digits once
// the running sum dwarfs each term (summing a million 1e-3 values in float
// is off in the third digit), and PyTorch's cascade summation does not show
// that error, so neither may we. Integral sums accumulate in int64.
template <typename T>
using sum_acc_t = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
template <typename T>
using sum_out_t = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;

}  // namespace tandem::backend
