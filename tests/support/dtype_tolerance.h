// A result against a float64 reference at the tolerance of the dtype it was
// computed in: the op table (tests/consistency/) and the CUDA suite
// (tests/cuda/) judge every other device's results this way.
//
//   Tensor want = relu(x);                                  // float64, cpu:0
//   Tensor got = relu(x.to("cpu:1", kFloat32));
//   EXPECT_TRUE(tandem::testing::close_to(got, want));      // float32 tolerance
#pragma once

#include <algorithm>
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::testing {

/// The largest finite |value| of `t` (0 if none), as a double.
inline double max_abs(const Tensor& t) {
  const Tensor host = t.detach().to(Device(kCPU), kFloat64).contiguous();
  const double* p = host.data_ptr<double>();
  double largest = 0;
  for (int64_t i = 0; i < host.numel(); ++i) {
    if (std::isfinite(p[i])) largest = std::max(largest, std::abs(p[i]));
  }
  return largest;
}

/// `got` (any device) against a reference: exactly for integral and bool
/// results; for floating ones, |got - want| <= rtol * |want| + atol * max|want|
/// with (rtol, atol) = (1e-4, 1e-5) for float32 and (1e-10, 1e-12) for float64,
/// both times `loosen`. Scaling atol by the largest element keeps results
/// that cancel to near zero from failing on their own relative error.
inline ::testing::AssertionResult close_to(const Tensor& got,
                                           const Tensor& want,
                                           double loosen = 1) {
  if (!got.defined() || !want.defined()) {
    return ::testing::AssertionFailure() << "undefined tensor (got " << got.defined()
                                         << ", want " << want.defined() << ")";
  }
  if (!got.is_floating_point()) return all_close(got, want, 0, 0);
  const bool single = got.dtype() == kFloat32 || want.dtype() == kFloat32;
  const double rtol = (single ? 1e-4 : 1e-10) * loosen;
  const double atol = (single ? 1e-5 : 1e-12) * loosen * max_abs(want);
  return all_close(got, want, rtol, atol);
}

}  // namespace tandem::testing
