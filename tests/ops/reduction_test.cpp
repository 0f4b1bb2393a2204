// Reductions: values and dtypes as PyTorch gives them (expected values from
// PyTorch 1.13), dims/keepdim handling, ties and NaN, empty inputs,
// gradients and error messages.
#include <cmath>
#include <limits>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

using testing::from_values;

Tensor iota(const IntList& sizes, ScalarType dtype = kFloat64) {
  return arange(numel_of(sizes), kFloat64).reshape(sizes).to(dtype);
}

Tensor leaf(const IntList& sizes) {
  return randn(sizes, TensorOptions(kFloat64).requires_grad(true));
}

// ---- sum ----

TEST(Sum, OverAllAndOverDims) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.sum().item<double>(), 276);
  EXPECT_EQ(x.sum().dim(), 0);
  EXPECT_TRUE(all_close(x.sum({0, 2}), from_values({60, 92, 124}, {3})));
  EXPECT_EQ(x.sum({-1, 0}, /*keepdim=*/true).sizes(), IntList({1, 3, 1}));
  EXPECT_TRUE(all_close(x.sum(1), from_values({12, 15, 18, 21, 48, 51, 54, 57}, {2, 4})));
  // A strided input: the transposed tensor summed over its middle dim.
  EXPECT_TRUE(all_close(x.transpose(0, 2).sum(1),
                        from_values({12, 48, 15, 51, 18, 54, 21, 57}, {4, 2})));
  EXPECT_EQ(scalar_tensor(2.5).sum().item<double>(), 2.5);
  EXPECT_EQ(scalar_tensor(2.5).sum({0}).dim(), 0);
}

TEST(Sum, IntegralAndBoolSumToInt64) {
  Tensor b = from_values({1, 0, 1, 1}, {4}, kBool);
  EXPECT_EQ(b.sum().dtype(), kInt64);
  EXPECT_EQ(b.sum().item<int64_t>(), 3);
  Tensor u = from_values({200, 100}, {2}, kUInt8);
  EXPECT_EQ(u.sum().item<int64_t>(), 300);  // no uint8 overflow
  EXPECT_EQ(iota({2, 3}, kInt64).sum(0).dtype(), kInt64);
  EXPECT_EQ(iota({2, 3}, kFloat32).sum(0).dtype(), kFloat32);
}

TEST(Sum, Float32AccumulatesInDouble) {
  // The exact sum of a million float 0.1s is 100000.0015, whose nearest
  // float is 100000. A float accumulator ends near 100958.34; PyTorch's
  // cascade sum gives 100000.0078 (one float step off).
  Tensor x = full({1000000}, 0.1, kFloat32);
  EXPECT_EQ(x.sum().item<double>(), 100000.0);
  EXPECT_NEAR(x.view({1000, 1000}).sum(0).sum().item<double>(), 100000.0, 0.01);
}

TEST(Sum, EmptyGivesZero) {
  EXPECT_EQ(zeros({0}).sum().item<double>(), 0);
  EXPECT_TRUE(all_close(zeros({0, 3}).sum(0), zeros({3})));
  EXPECT_EQ(zeros({3, 0}).sum(0).sizes(), IntList({0}));
}

TEST(Sum, Errors) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        x.sum({0, -2});
      },
      "sum: dim 0 appears multiple times in the list of dims"));
  EXPECT_TRUE(throws_with([&] { x.sum(2); },
                          "sum: dimension out of range (expected to be in range of "
                          "[-2, 1], but got 2)"));
  EXPECT_TRUE(throws_with([] { sum(Tensor()); }, "sum: argument 'self' is undefined"));
}

TEST(Sum, Gradcheck) {
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].sum(); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].sum({0, -1});
      },
      {leaf({2, 3, 4})}));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].sum(1, true) * in[0]; },
                        {leaf({2, 3})}));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].t().sum(0); }, {leaf({2, 3})}));
  Tensor x = leaf({2, 3});
  EXPECT_EQ(x.sum().grad_fn()->name(), "SumBackward");
}

// ---- mean ----

TEST(Mean, OverAllAndOverDims) {
  Tensor x = iota({2, 3, 4});
  EXPECT_EQ(x.mean().item<double>(), 11.5);
  EXPECT_TRUE(all_close(x.mean({0, 2}), from_values({7.5, 11.5, 15.5}, {3})));
  EXPECT_TRUE(all_close(x.mean(-1, true),
                        from_values({1.5, 5.5, 9.5, 13.5, 17.5, 21.5}, {2, 3, 1})));
  EXPECT_EQ(iota({4}, kFloat32).mean().dtype(), kFloat32);
  EXPECT_TRUE(std::isnan(zeros({0}).mean().item<double>()));
}

TEST(Mean, RejectsIntegralInputs) {
  EXPECT_TRUE(throws_with([] { iota({2}, kInt64).mean(); },
                          "mean: could not infer output dtype; expected a "
                          "floating-point input, got int64"));
}

TEST(Mean, Gradcheck) {
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].mean(); }, {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].mean({-1, 1}, true);
      },
      {leaf({2, 3, 4})}));
  Tensor x = leaf({4});
  x.mean().backward();
  EXPECT_TRUE(all_close(x.grad(), full({4}, 0.25, kFloat64)));
}

// ---- max, min over all elements ----

TEST(MaxMin, OverAllElements) {
  Tensor y = from_values({3, 1, 3, 0, 5, 5}, {2, 3});
  EXPECT_EQ(y.max().item<double>(), 5);
  EXPECT_EQ(y.min().item<double>(), 0);
  EXPECT_EQ(y.max().dim(), 0);
  EXPECT_EQ(from_values({1, 200}, {2}, kUInt8).max().dtype(), kUInt8);
  Tensor nan = from_values({1, std::numeric_limits<double>::quiet_NaN(), 3}, {3});
  EXPECT_TRUE(std::isnan(nan.max().item<double>()));
  EXPECT_TRUE(std::isnan(nan.min().item<double>()));
}

TEST(MaxMin, TiesShareTheGradientEvenly) {
  Tensor x = from_values({3, 1, 3, 0}, {4}).requires_grad_();
  x.max().backward();
  EXPECT_TRUE(all_close(x.grad(), from_values({0.5, 0, 0.5, 0}, {4})));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].max(); }, {leaf({3, 4})}));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].min(); }, {leaf({3, 4})}));
}

TEST(MaxMin, EmptyInputIsAnError) {
  EXPECT_TRUE(throws_with([] { zeros({0}).max(); },
                          "max: expected reduction dim to be specified for "
                          "input.numel() == 0"));
  EXPECT_TRUE(throws_with(
      [] {
        zeros({0, 3}).argmin();
      },
      "argmin: expected reduction dim"));
}

// ---- along a dim ----

TEST(MaxMinDim, ValuesAndFirstIndices) {
  Tensor y = from_values({3, 1, 3, 0, 5, 5}, {2, 3});
  auto [values, indices] = y.max(1);
  EXPECT_TRUE(all_close(values, from_values({3, 5}, {2})));
  EXPECT_EQ(indices.dtype(), kInt64);
  EXPECT_TRUE(all_close(indices, from_values({0, 1}, {2}, kInt64)));
  auto [mv, mi] = y.min(-2, /*keepdim=*/true);
  EXPECT_TRUE(all_close(mv, from_values({0, 1, 3}, {1, 3})));
  EXPECT_TRUE(all_close(mi, from_values({1, 0, 0}, {1, 3}, kInt64)));
  auto [sv, si] = scalar_tensor(4.0).max(0);
  EXPECT_EQ(sv.item<double>(), 4);
  EXPECT_EQ(si.item<int64_t>(), 0);
  Tensor nan = from_values({1, std::numeric_limits<double>::quiet_NaN(), 3}, {3});
  EXPECT_EQ(std::get<1>(nan.max(0)).item<int64_t>(), 1);
  // An empty dim that is not reduced gives empty results.
  EXPECT_EQ(std::get<0>(zeros({3, 0}).max(0)).sizes(), IntList({0}));
}

TEST(MaxMinDim, Errors) {
  EXPECT_TRUE(throws_with(
      [] {
        zeros({0, 3}).max(0);
      },
      "max: expected reduction dim 0 to have non-zero size"));
  EXPECT_TRUE(throws_with([] { zeros({2, 3}).min(2); }, "min: dimension out of range"));
}

TEST(MaxMinDim, GradientGoesToTheIndex) {
  Tensor x = from_values({3, 1, 3, 0, 5, 5}, {2, 3}).requires_grad_();
  std::get<0>(x.max(1)).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from_values({1, 0, 0, 0, 1, 0}, {2, 3})));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return std::get<0>(in[0].max(1)); },
                        {leaf({3, 4})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) { return std::get<0>(in[0].min(-3, /*keepdim=*/true)); },
      {leaf({3, 2, 2})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return std::get<0>(in[0].t().max(0, /*keepdim=*/false));
      },
      {leaf({3, 4})}));
}

TEST(ArgMaxArgMin, FlatAndAlongADim) {
  Tensor y = from_values({3, 1, 3, 0, 5, 5}, {2, 3});
  EXPECT_EQ(y.argmax().item<int64_t>(), 4);
  EXPECT_EQ(y.argmin().item<int64_t>(), 3);
  EXPECT_EQ(y.argmax().dtype(), kInt64);
  EXPECT_TRUE(
      all_close(y.argmax(1, /*keepdim=*/true), from_values({0, 1}, {2, 1}, kInt64)));
  EXPECT_TRUE(all_close(y.argmin(0), from_values({1, 0, 0}, {3}, kInt64)));
  EXPECT_EQ(y.t().argmax().item<int64_t>(), 3);  // flat index of the transposed view
  EXPECT_FALSE(leaf({3}).argmax().requires_grad());
}

}  // namespace
}  // namespace tandem
