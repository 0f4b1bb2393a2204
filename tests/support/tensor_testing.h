// Test helpers: tensor comparisons whose failures show shapes, dtypes,
// devices and the worst element, and golden files written by PyTorch.
//
//   EXPECT_TRUE(tandem::testing::all_close(got, want, 1e-5, 1e-6));
//   auto golden = tandem::testing::load_golden("mlp_sgd.txt");
//   Tensor w = golden.at("fc1.weight");
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tandem/tandem.h"

namespace tandem::testing {

/// Passes when shapes match and |a-b| <= atol + rtol*|b| everywhere; the
/// failure message names the shapes and the worst element.
::testing::AssertionResult all_close(const Tensor& got,
                                     const Tensor& want,
                                     double rtol = 1e-5,
                                     double atol = 1e-8);

/// A tensor of `sizes` holding `values` (row-major), converted to `dtype`.
Tensor from_values(const std::vector<double>& values,
                   const IntList& sizes,
                   ScalarType dtype = kFloat64);

/// Named tensors from tests/reference/*.py (file under TANDEM_GOLDEN_DIR).
std::map<std::string, Tensor> load_golden(const std::string& file);

/// Runs `f` and expects a tandem::Error whose message contains `needle`.
template <typename F>
::testing::AssertionResult throws_with(F&& f, const std::string& needle) {
  try {
    f();
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.find(needle) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "error message \"" << what << "\" lacks \"" << needle << "\"";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw a non-tandem::Error: " << e.what();
  }
  return ::testing::AssertionFailure() << "did not throw (expected \"" << needle << "\")";
}

}  // namespace tandem::testing
