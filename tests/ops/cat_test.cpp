// cat and stack: values, dtype promotion, PyTorch's legacy empty tensors,
// gradients and error messages.
#include <vector>

#include "ops/shape_test_util.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::iota;
using testing::leaf;
using testing::throws_with;
using testing::values;

// ---- cat, stack ----

TEST(Cat, JoinsAlongADim) {
  Tensor a = iota({2, 2}), b = iota({2, 3}) + 10;
  Tensor c = cat({a, b}, -1);
  EXPECT_EQ(c.sizes(), IntList({2, 5}));
  EXPECT_EQ(values(c), std::vector<double>({0, 1, 10, 11, 12, 2, 3, 13, 14, 15}));
  EXPECT_EQ(values(cat({a.t(), a})), std::vector<double>({0, 2, 1, 3, 0, 1, 2, 3}));
}

TEST(Cat, PromotesDtypesAndSkipsLegacyEmptyTensors) {
  Tensor c = cat({iota({2}, kInt64), iota({1}, kFloat32)});
  EXPECT_EQ(c.dtype(), kFloat32);
  EXPECT_EQ(values(c), std::vector<double>({0, 1, 0}));
  Tensor d = cat({iota({2, 3}), zeros({0}, kFloat64)}, 1);
  EXPECT_EQ(d.sizes(), IntList({2, 3}));
  EXPECT_EQ(cat({zeros({0}), zeros({0})}).sizes(), IntList({0}));
}

TEST(Cat, ErrorsNameTheProblem) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with([] { cat({}); }, "cat: expected a non-empty list of tensors"));
  EXPECT_TRUE(throws_with(
      [&] {
        cat({x, iota({2, 4})});
      },
      "cat: sizes of tensors must match except in dimension 0; "
      "expected size 3 but got size 4 for tensor 1"));
  EXPECT_TRUE(throws_with(
      [&] {
        cat({x, iota({2})});
      },
      "cat: tensors must have the same number of dimensions, got 2 and 1"));
  EXPECT_TRUE(throws_with(
      [&] {
        cat({x, x.to(Device("cpu:1"))});
      },
      "cat: expected all tensors on the same device, got cpu:0 and cpu:1"));
  EXPECT_TRUE(throws_with(
      [&] {
        cat({x, Tensor()});
      },
      "cat: tensor 1 in the list is undefined"));
  EXPECT_TRUE(throws_with([&] { cat({x}, 2); }, "cat: dimension out of range"));
}

TEST(Cat, Gradcheck) {
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return cat({in[0], in[1], in[0]}, -1);
      },
      {leaf({2, 3}), leaf({2, 1})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return cat({in[0], in[1].t()}) * 2;
      },
      {leaf({1, 2}), leaf({2, 3})}));
}

TEST(Stack, AddsANewDim) {
  Tensor a = iota({2, 3}), b = iota({2, 3}) + 6;
  EXPECT_EQ(stack({a, b}).sizes(), IntList({2, 2, 3}));
  Tensor s = stack({a, b}, -1);
  EXPECT_EQ(s.sizes(), IntList({2, 3, 2}));
  EXPECT_EQ(values(s.select(0, 1).select(0, 2)), std::vector<double>({5, 11}));
  EXPECT_TRUE(throws_with(
      [&] {
        stack({a, iota({2, 4})});
      },
      "stack: expected each tensor to be equal size, but got [2, 3] at "
      "entry 0 and [2, 4] at entry 1"));
  EXPECT_TRUE(
      throws_with([] { stack({}); }, "stack: expected a non-empty list of tensors"));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return stack({in[0], in[1]}, 1);
      },
      {leaf({2, 3}), leaf({2, 3})}));
}

}  // namespace
}  // namespace tandem
