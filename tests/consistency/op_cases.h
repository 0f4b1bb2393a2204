// The op table's row type and fixture. A row is one differentiable op (or
// one interesting variant: a view, a broadcast, an empty or a large size),
// its inputs' shapes and ranges, and the op applied to them.
// op_cases_test.cpp runs every row on every device; the *_cases_test.cpp
// files hold the rows, one family each, and instantiate the fixture:
//
//   std::vector<OpCase> rows() {
//     return {{"exp", {F({2, 3})}, [](L in) { return exp(in[0]); }},
//             {"exp_million", {F({kMillion})}, [](L in) { return exp(in[0]); },
//              kTooLargeForFiniteDifferences}};
//   }
//   INSTANTIATE_TEST_SUITE_P(Elementwise, OpTable, ValuesIn(rows()), row_name);
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem::testing::op_table {

using autograd::tensor_list;
using L = const tensor_list&;

constexpr int64_t kMillion = 1 << 20;

// One input of a row: floating values uniform in [low, high) that require
// grad unless `constant`, or (index) int64 values in [low, high).
struct Input {
  IntList shape;
  double low = -2, high = 2;
  bool index = false;
  bool constant = false;
};

inline Input F(IntList shape) { return {std::move(shape)}; }
inline Input P(IntList shape) { return {std::move(shape), 0.5, 2.0}; }  // positive
inline Input I(IntList shape, int64_t high) {
  return {std::move(shape), 0, static_cast<double>(high), true};
}
inline Input U(IntList shape) { return {std::move(shape), 0.1, 0.9}; }  // probabilities
// Positive and without gradient: class weights and running statistics, which
// PyTorch does not differentiate either.
inline Input W(IntList shape) { return {std::move(shape), 0.5, 2.0, false, true}; }

// What sets a row apart from the default (every check, the dtype's tolerance).
struct Flags {
  // Why gradcheck and gradgradcheck do not apply to the row (null: they
  // do). Finite differences take two forwards per input element.
  const char* no_finite_differences = nullptr;
  // False for ops whose backward is a fused kernel that is not recorded:
  // create_graph must be refused.
  bool second_derivatives = true;
  // Factor on the dtype's tolerance off the reference device (cuDNN picks
  // convolution algorithms, FFT and Winograd among them, that round apart).
  double loosen = 1;
};

inline constexpr const char* kTooLarge = "too many elements for finite differences in CI";
// The stress rows' sizes: many blocks on a GPU, too many elements to nudge
// (the inputs' for gradcheck, the inputs' and the output's for
// gradgradcheck).
inline constexpr Flags kTooLargeForFiniteDifferences{.no_finite_differences = kTooLarge};
// Empty inputs: nothing to nudge, and gradgradcheck's first derivatives of
// an empty input do not depend on anything.
inline constexpr Flags kEmpty{.no_finite_differences =
                                  "an empty input: no element to nudge"};
// The fused recurrent kernels: no double backward, as PyTorch's cuDNN RNN.
inline constexpr Flags kNoDoubleBackward{.second_derivatives = false};
inline constexpr double kConvLoosen = 10;
inline constexpr Flags kConvolution{.loosen = kConvLoosen};
inline constexpr Flags kLargeConvolution{.no_finite_differences = kTooLarge,
                                         .loosen = kConvLoosen};

// The most input elements a row may have and still run finite differences
// (op_cases_test.cpp fails a larger row that does not say it skips them).
inline constexpr int64_t kFiniteDifferenceBudget = 2048;

struct OpCase {
  std::string name;
  std::vector<Input> inputs;
  std::function<Tensor(const tensor_list&)> fn;
  Flags flags = {};
};

inline void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

// A row written once and run at two sizes: as written, small enough for
// finite differences, and as `<name>_large` at the `large` shapes (kernels
// that span many GPU blocks, tiles or a ragged tail), without them.
struct TwoSizes {
  OpCase small;
  std::vector<Input> large;
};

inline std::vector<OpCase> at_two_sizes(const std::vector<TwoSizes>& rows) {
  std::vector<OpCase> out;
  for (const TwoSizes& r : rows) {
    out.push_back(r.small);
    OpCase large = r.small;
    large.name += "_large";
    large.inputs = r.large;
    large.flags.no_finite_differences = kTooLarge;
    out.push_back(std::move(large));
  }
  return out;
}

// The parts' rows, in order.
inline std::vector<OpCase> joined(std::initializer_list<std::vector<OpCase>> parts) {
  std::vector<OpCase> out;
  for (const std::vector<OpCase>& part : parts)
    out.insert(out.end(), part.begin(), part.end());
  return out;
}

// Test names from the rows' names.
inline std::string row_name(const ::testing::TestParamInfo<OpCase>& info) {
  return info.param.name;
}

// Runs each row it is instantiated with on every device (op_cases_test.cpp).
class OpTable : public ::testing::TestWithParam<OpCase> {};

}  // namespace tandem::testing::op_table
