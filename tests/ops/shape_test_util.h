// Helpers shared by the shape-op tests (shape, slice and cat tests).
#pragma once

#include <vector>

#include "tandem/tandem.h"

namespace tandem::testing {

// 0, 1, 2, ... in `sizes` (float64 unless told).
inline Tensor iota(const IntList& sizes, ScalarType dtype = kFloat64) {
  return arange(numel_of(sizes), kFloat64).reshape(sizes).to(dtype);
}

// The values of `t` in row-major order.
inline std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(kFloat64).contiguous();
  return {c.data_ptr<double>(), c.data_ptr<double>() + c.numel()};
}

inline Tensor leaf(const IntList& sizes) {
  return randn(sizes, TensorOptions(kFloat64).requires_grad(true));
}

template <typename F>
bool throws_index_error(F&& f) {
  try {
    f();
  } catch (const IndexError&) {
    return true;
  } catch (...) {
    return false;
  }
  return false;
}

}  // namespace tandem::testing
