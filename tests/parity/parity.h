// Helpers shared by the parity tests, which compare tandem with the values
// PyTorch wrote into golden files (tests/reference/generate_all.py).
//
//   Golden g = load_golden("mlp_float32.txt");
//   EXPECT_TRUE(matches(logits, golden_at(g, "logits")));
#pragma once

#include <map>
#include <string>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::parity {

using Golden = std::map<std::string, Tensor>;

/// The bar: 1e-5 relative in float32, 1e-10 in float64, with an
/// absolute floor a few ulps of 1 wide for values near zero.
inline double rtol_for(ScalarType dtype) { return dtype == kFloat32 ? 1e-5 : 1e-10; }
inline double atol_for(ScalarType dtype) { return dtype == kFloat32 ? 1e-6 : 1e-12; }

/// all_close at the tolerances of `want`'s dtype, which `got` must share.
inline ::testing::AssertionResult matches(const Tensor& got, const Tensor& want) {
  if (got.defined() && got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype() << " != expected " << want.dtype();
  }
  return testing::all_close(got, want, rtol_for(want.dtype()), atol_for(want.dtype()));
}

inline const Tensor& golden_at(const Golden& golden, const std::string& key) {
  auto it = golden.find(key);
  TANDEM_CHECK(it != golden.end(),
               "golden file has no tensor named ",
               key,
               "; regenerate it with tests/reference/generate_all.py");
  return it->second;
}

inline ScalarType dtype_named(const std::string& name) {
  return name == "float32" ? kFloat32 : kFloat64;
}

}  // namespace tandem::parity
