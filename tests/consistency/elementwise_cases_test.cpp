// The op table's elementwise rows (tandem/ops/elementwise.h): arithmetic
// with tensors and scalars, broadcasting (stride-0 operands), transposed
// views, size-0 and size-1 dims, 1M elements, the unary math functions,
// in-place ops on non-leaves (recorded through copy_) and copies across
// devices and dtypes. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Rounds through float32 and back in float64: finite differences of 1e-6
// see float32's rounding, not the derivative.
constexpr Flags kThroughFloat32{.no_finite_differences =
                                    "rounds through float32, coarser than the nudges"};

std::vector<OpCase> arithmetic_rows() {
  return {
      {"add_broadcast_alpha",
       {F({3, 1}), F({1, 4})},
       [](L in) { return add(in[0], in[1], 0.5); }},
      {"add_broadcast_alpha_3d",
       {F({5, 1, 7}), F({3, 1})},
       [](L in) { return add(in[0], in[1], 0.5); }},
      {"add_transposed",
       {F({65, 33}), F({33, 65})},
       [](L in) { return in[0].t() + in[1]; },
       kTooLargeForFiniteDifferences},
      {"add_zero_dim", {F({4, 5}), F({})}, [](L in) { return in[0] + in[1]; }},
      {"add_scalar_alpha", {F({9})}, [](L in) { return add(in[0], 1.5, 2); }},
      {"sub_broadcast_alpha",
       {F({2, 3}), F({3})},
       [](L in) { return sub(in[0], in[1], 2); }},
      {"sub_scalar", {F({5})}, [](L in) { return sub(in[0], 0.25); }},
      {"rsub_scalar", {F({9})}, [](L in) { return 3 - in[0]; }},
      {"mul_broadcast_both",
       {F({4, 1, 3}), F({2, 1})},
       [](L in) { return in[0] * in[1]; }},
      {"mul_zero_dim", {F({2, 3}), F({})}, [](L in) { return in[0] * in[1]; }},
      {"mul_million",
       {F({kMillion}), F({kMillion})},
       [](L in) { return in[0] * in[1]; },
       kTooLargeForFiniteDifferences},
      {"mul_empty", {F({0, 3}), F({3})}, [](L in) { return in[0] * in[1]; }},
      {"mul_size_one_dims",
       {F({1, 7, 1}), F({1, 1, 1})},
       [](L in) { return in[0] * in[1]; }},
      {"mul_scalar", {F({9})}, [](L in) { return in[0] * -1.5; }},
      {"div", {F({7, 9}), P({7, 9})}, [](L in) { return in[0] / in[1]; }},
      {"div_broadcast", {F({2, 3}), P({3})}, [](L in) { return in[0] / in[1]; }},
      {"div_transposed_broadcast",
       {F({9, 7}), P({9, 1})},
       [](L in) { return in[0].t() / in[1].t(); }},
      {"div_scalar", {F({9})}, [](L in) { return in[0] / 3; }},
      {"rdiv_scalar", {P({9})}, [](L in) { return 2 / in[0]; }},
      {"pow_tensor", {P({5, 6}), F({5, 6})}, [](L in) { return pow(in[0], in[1]); }},
      {"pow_broadcast", {P({5, 6}), F({6})}, [](L in) { return pow(in[0], in[1]); }},
      {"pow_scalar", {F({33})}, [](L in) { return pow(in[0], 3); }},
      {"pow_square", {F({33})}, [](L in) { return pow(in[0], 2); }},
      {"pow_fractional", {P({33})}, [](L in) { return pow(in[0], -1.5); }},
      {"pow_scalar_base", {F({33})}, [](L in) { return pow(1.5, in[0]); }},
      {"maximum", {F({3, 4}), F({4})}, [](L in) { return maximum(in[0], in[1]); }},
      {"minimum", {F({3, 4}), F({3, 1})}, [](L in) { return minimum(in[0], in[1]); }},
      {"where_broadcast",
       {F({3, 4}), F({4})},
       [](L in) { return where(in[0] > 0, in[0], in[1]); }},
      {"where_transposed",
       {F({65, 33}), F({33, 65})},
       [](L in) { return where(in[1] < 0.5, in[0].t(), in[1]); },
       kTooLargeForFiniteDifferences},
  };
}

// Each also at a size of several GPU blocks with a ragged tail.
std::vector<TwoSizes> multi_block_rows() {
  return {
      {{"add", {F({3, 4}), F({3, 4})}, [](L in) { return in[0] + in[1]; }},
       {F({33, 65}), F({33, 65})}},
      {{"neg", {F({5})}, [](L in) { return neg(in[0]); }}, {F({37, 129})}},
      {{"exp", {F({2, 3})}, [](L in) { return exp(in[0]); }}, {F({37, 129})}},
      {{"log", {P({2, 3})}, [](L in) { return log(in[0]); }}, {P({37, 129})}},
      {{"sqrt", {P({5})}, [](L in) { return sqrt(in[0]); }}, {P({37, 129})}},
      {{"rsqrt", {P({5})}, [](L in) { return rsqrt(in[0]); }}, {P({37, 129})}},
      {{"abs", {F({6})}, [](L in) { return abs(in[0]); }}, {F({37, 129})}},
      {{"sign", {F({6})}, [](L in) { return sign(in[0]) * in[0]; }}, {F({37, 129})}},
      {{"square", {F({6})}, [](L in) { return square(in[0]); }}, {F({37, 129})}},
      {{"reciprocal", {P({5})}, [](L in) { return reciprocal(in[0]); }}, {P({37, 129})}},
      {{"clamp", {F({8})}, [](L in) { return clamp(in[0], -1, 1); }}, {F({37, 129})}},
      {{"clamp_min", {F({8})}, [](L in) { return clamp_min(in[0], 0.3); }},
       {F({37, 129})}},
      {{"clamp_max", {F({8})}, [](L in) { return clamp_max(in[0], -0.3); }},
       {F({37, 129})}},
      {{"clamp_upper_only",
        {F({8})},
        [](L in) { return clamp(in[0], std::nullopt, 0.5); }},
       {F({37, 129})}},
  };
}

std::vector<OpCase> view_rows() {
  return {
      {"exp_million",
       {F({kMillion})},
       [](L in) { return exp(in[0]); },
       kTooLargeForFiniteDifferences},
      {"exp_expanded",
       {F({5, 1})},
       [](L in) {
         return exp(in[0].expand({4, 5, 6}));
       }},
      {"exp_transposed",
       {F({129, 37})},
       [](L in) { return exp(in[0].t()); },
       kTooLargeForFiniteDifferences},
  };
}

// In place on non-leaves, recorded through copy_.
std::vector<OpCase> inplace_rows() {
  return {
      {"add_inplace",
       {F({2, 3}), F({3})},
       [](L in) { return (in[0] * 1).add_(in[1], 0.5); }},
      {"add_inplace_transposed_operand",
       {F({6, 4}), F({4, 6})},
       [](L in) { return (in[0] * 1).add_(in[1].t(), 0.5); }},
      {"sub_inplace",
       {F({2, 3}), F({2, 1})},
       [](L in) { return (in[0] * 1).sub_(in[1]); }},
      {"mul_inplace",
       {F({2, 3}), F({2, 3})},
       [](L in) { return (in[0] * 1).mul_(in[1]); }},
      {"div_inplace", {F({2, 3}), P({3})}, [](L in) { return (in[0] * 1).div_(in[1]); }},
      {"mul_div_inplace",
       {F({5, 3}), F({5, 3}), P({3})},
       [](L in) { return (in[0] * 1).mul_(in[1]).div_(in[2]); }},
      {"scalar_inplace",
       {F({33})},
       [](L in) { return (in[0] * 1).mul_(3).add_(1).sub_(0.5).div_(2); }},
      {"clamp_inplace", {F({8})}, [](L in) { return (in[0] * 1).clamp_(-1, 0.5); }},
      {"relu_inplace", {F({8})}, [](L in) { return (in[0] * 1).relu_(); }},
      {"clamp_relu_inplace",
       {F({33})},
       [](L in) { return (in[0] * 1).clamp_(-1, 0.5).relu_(); }},
      {"copy_inplace_broadcast",
       {F({4, 3}), F({3})},
       [](L in) { return (in[0] * 1).copy_(in[1]) * in[0]; }},
  };
}

// Copies: within a device, across devices and across dtypes.
std::vector<OpCase> copy_rows() {
  return {
      {"clone", {F({3, 2})}, [](L in) { return in[0].clone() * in[0]; }},
      {"to_device",
       {F({3, 2})},
       [](L in) { return (in[0].to("cpu:2") * in[0].to("cpu:2")).to(in[0].device()); }},
      {"through_the_cpu_and_back",
       {F({3, 5})},
       [](L in) { return (in[0].to(kCPU) * in[0].to(kCPU)).to(in[0].device()) + in[0]; }},
      {"to_other_dtype_and_back",
       {F({17})},
       [](L in) {
         const ScalarType other = in[0].dtype() == kFloat32 ? kFloat64 : kFloat32;
         return (in[0].to(other) * 2).to(in[0].dtype());
       },
       kThroughFloat32},
  };
}

std::vector<OpCase> rows() {
  return joined({arithmetic_rows(),
                 at_two_sizes(multi_block_rows()),
                 view_rows(),
                 inplace_rows(),
                 copy_rows()});
}

INSTANTIATE_TEST_SUITE_P(Elementwise, OpTable, ::testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace tandem::testing::op_table
