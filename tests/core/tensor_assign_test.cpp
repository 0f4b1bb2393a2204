// Assignment to a Tensor, as in LibTorch: a named tensor rebinds its handle,
// a temporary one (x[i], x.narrow(...), x.select(...)) copies into the part
// of x it views, broadcasting, and a scalar fills it. Autograd follows the
// write into the base, as PyTorch's CopySlices does.
#include <cmath>
#include <utility>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::from_values;
using testing::throws_with;

Tensor iota(const IntList& sizes) {
  return arange(numel_of(sizes), kFloat64).reshape(sizes);
}

TEST(TensorAssign, NamedTensorRebindsItsHandle) {
  Tensor x = zeros({2, 3}, kFloat64);
  Tensor a = x;
  Tensor b = ones({4}, kFloat64);
  a = b;
  EXPECT_TRUE(a.is_same(b));
  EXPECT_TRUE(all_close(x, zeros({2, 3}, kFloat64)));
  a = Tensor();
  EXPECT_FALSE(a.defined());
  a = std::move(b);
  EXPECT_EQ(a.sizes(), IntList({4}));
}

TEST(TensorAssign, IndexingThenAssigningWritesIntoTheBase) {
  Tensor x = zeros({3, 4}, kFloat64);
  Tensor row = from_values({1, 2, 3, 4}, {4});
  x[1] = row;                              // const Tensor&
  x[-1] = from_values({5, 6, 7, 8}, {4});  // Tensor&&
  x.narrow(/*dim=*/0, /*start=*/0, /*length=*/1) = from_values({9}, {1});  // broadcast
  EXPECT_TRUE(all_close(x, from_values({9, 9, 9, 9, 1, 2, 3, 4, 5, 6, 7, 8}, {3, 4})));
  EXPECT_TRUE(all_close(row, from_values({1, 2, 3, 4}, {4})));  // the source is kept
}

TEST(TensorAssign, ScalarFillsAndDtypesConvert) {
  Tensor x = zeros({2, 3}, kFloat32);
  x[0] = 2.5;
  x.select(/*dim=*/1, /*index=*/2) = 7;
  x[1][0] = scalar_tensor(-4, kInt64);  // int64 into float32
  EXPECT_TRUE(all_close(x, from_values({2.5, 2.5, 7, -4, 0, 7}, {2, 3}, kFloat32)));
  Tensor ints = zeros({3}, kInt64);
  ints.narrow(0, 1, 2) = tensor({1.9, -2.9});  // truncated, as copy_ does
  EXPECT_EQ(ints[1].item<int64_t>(), 1);
  EXPECT_EQ(ints[2].item<int64_t>(), -2);
  ints[0] = 2.5;  // fill_ truncates too, as in PyTorch
  EXPECT_EQ(ints[0].item<int64_t>(), 2);
  Tensor bytes = zeros({2}, kUInt8);
  EXPECT_TRUE(
      throws_with([&] { bytes[0] = 300; }, "fill_: value 300 cannot be converted"));
}

TEST(TensorAssign, ChainsAndTransposedViewsWriteThrough) {
  Tensor x = zeros({2, 3}, kFloat64);
  x[1][2] = 5.0;
  x.t()[0] = from_values({1, 2}, {2});  // column 0
  EXPECT_TRUE(all_close(x, from_values({1, 0, 0, 2, 0, 5}, {2, 3})));
}

TEST(TensorAssign, WrongShapesAndUndefinedSourcesAreRefused) {
  Tensor x = zeros({3, 4}, kFloat64);
  EXPECT_TRUE(throws_with([&] { x[0] = ones({5}); },
                          "copy_: shapes [4] and [5] cannot be broadcast"));
  EXPECT_TRUE(throws_with([&] { x[0] = Tensor(); }, "copy_"));
  EXPECT_TRUE(throws_with([&] { x[3] = 1.0; },
                          "select: index 3 is out of range for dimension 0 with size 3"));
  EXPECT_TRUE(all_close(x, zeros({3, 4}, kFloat64)));
}

// ---- autograd (PyTorch 1.13's numbers) ----

TEST(TensorAssign, GradientReachesTheSourceThroughTheBase) {
  Tensor x = zeros({3, 4}, kFloat64);
  Tensor y = arange(4, kFloat64).requires_grad_();
  Tensor w = iota({3, 4});
  x[1] = y;
  EXPECT_TRUE(x.requires_grad());
  EXPECT_FALSE(x.is_leaf());
  (x * w).sum().backward();
  EXPECT_TRUE(all_close(y.grad(), from_values({4, 5, 6, 7}, {4})));
}

TEST(TensorAssign, WritingOverPartOfAGraphCutsItsGradient) {
  Tensor a = ones({3, 4}, kFloat64).requires_grad_();
  Tensor y = ones({4}, kFloat64).requires_grad_();
  Tensor x = a * 2;
  x[1] = y * 3;
  x.narrow(/*dim=*/1, /*start=*/3, /*length=*/1) = 7.0;
  (x * iota({3, 4})).sum().backward();
  EXPECT_TRUE(
      all_close(a.grad(), from_values({0, 2, 4, 0, 0, 0, 0, 0, 16, 18, 20, 0}, {3, 4})));
  EXPECT_TRUE(all_close(y.grad(), from_values({12, 15, 18, 0}, {4})));
}

TEST(TensorAssign, ChainedWriteOfAScalarTensor) {
  Tensor x = zeros({3, 4}, kFloat64);
  Tensor s = scalar_tensor(2.0, kFloat64).requires_grad_();
  x[1][2] = s;
  (x * iota({3, 4})).sum().backward();
  EXPECT_EQ(s.grad().item<double>(), 6.0);
  EXPECT_EQ(x[1][2].item<double>(), 2.0);
}

TEST(TensorAssign, TheWrittenViewCarriesTheNewHistory) {
  Tensor x = zeros({2, 3}, kFloat64);
  Tensor y = ones({3}, kFloat64).requires_grad_();
  Tensor row = x[0];
  row.copy_(y * 2);
  (row * from_values({1, 2, 3}, {3})).sum().backward();
  EXPECT_TRUE(all_close(y.grad(), from_values({2, 4, 6}, {3})));
}

TEST(TensorAssign, GradcheckThroughAWriteIntoAView) {
  auto f = [](const autograd::tensor_list& in) {
    Tensor x = in[0] * 1.5;
    x.narrow(0, 1, 2) = in[1].tanh();
    x[0][1] = in[1][0][0];
    return x * x;
  };
  const autograd::tensor_list inputs{randn({4, 3}, kFloat64).requires_grad_(),
                                     randn({2, 3}, kFloat64).requires_grad_()};
  Tensor out = f(inputs).detach();
  EXPECT_TRUE(all_close(out.narrow(0, 1, 2), inputs[1].detach().tanh().pow(2)));
  EXPECT_NEAR(
      out[0][1].item<double>(), std::pow(inputs[1][0][0].item<double>(), 2), 1e-12);
  EXPECT_TRUE(autograd::gradcheck(f, inputs));
}

TEST(TensorAssign, WritingIntoAViewOfALeafThatRequiresGradIsRefused) {
  Tensor x = zeros({3, 4}, kFloat64).requires_grad_();
  Tensor y = ones({4}, kFloat64);
  const char* message =
      "a view of a leaf tensor that requires grad is being used in an in-place "
      "operation";
  EXPECT_TRUE(throws_with([&] { x[1] = y; }, message));
  EXPECT_TRUE(throws_with([&] { x.narrow(0, 0, 1) = y; }, message));
  EXPECT_TRUE(throws_with([&] { x[1] = 2.0; }, message));
  EXPECT_TRUE(all_close(x.detach(), zeros({3, 4}, kFloat64)));
  {
    NoGradGuard no_grad;  // how initialisers write into parameters
    x[1] = y;
  }
  EXPECT_EQ(x[1][0].item<double>(), 1.0);
  EXPECT_TRUE(x.is_leaf());
}

}  // namespace
}  // namespace tandem
