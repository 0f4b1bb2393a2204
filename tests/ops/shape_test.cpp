// Shape ops that regroup or reorder dims: views share storage and have
// PyTorch's geometry, reshape copies only when it must, gradients pass
// gradcheck, and misuse gives PyTorch's errors.
#include <vector>

#include "ops/shape_test_util.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::iota;
using testing::leaf;
using testing::throws_index_error;
using testing::throws_with;
using testing::values;

// ---- view, reshape, flatten ----

TEST(View, SharesStorageAndInfersMinusOne) {
  Tensor x = iota({2, 3});
  Tensor v = x.view({3, -1});
  EXPECT_EQ(v.sizes(), IntList({3, 2}));
  EXPECT_EQ(v.data_ptr(), x.data_ptr());
  v.fill_(7);
  EXPECT_EQ(values(x), std::vector<double>(6, 7));
}

TEST(View, WorksOnNonContiguousTensorsWhenStridesAllow) {
  // [2, 3, 4] transposed to [3, 2, 4]: the last dim is still contiguous,
  // so it can be split without a copy (PyTorch's rule).
  Tensor x = iota({2, 3, 4});
  Tensor v = x.transpose(0, 1).view({3, 2, 2, 2});
  EXPECT_EQ(v.strides(), IntList({4, 12, 2, 1}));
  EXPECT_EQ(v.data_ptr(), x.data_ptr());
  EXPECT_EQ(values(v), values(x.transpose(0, 1).contiguous()));
}

TEST(View, StridesMatchPyTorchForSizeOneExpandedAndEmptyDims) {
  Tensor e = iota({3, 1}).expand({3, 4});
  EXPECT_EQ(e.view({3, 2, 2}).strides(), IntList({1, 0, 0}));
  EXPECT_TRUE(throws_with([&] { e.view({12}); }, "Use .reshape(...) instead"));
  Tensor s = iota({2, 1, 3}).narrow(2, 1, 2);
  EXPECT_EQ(s.view({2, 2}).strides(), IntList({3, 1}));
  EXPECT_EQ(s.view({1, 2, 1, 2}).strides(), IntList({6, 3, 2, 1}));
  EXPECT_EQ(zeros({0, 3}).view({3, 0}).strides(), IntList({1, 1}));
  EXPECT_EQ(zeros({4, 1}).t().unsqueeze(0).strides(), IntList({1, 1, 1}));
}

TEST(View, ErrorsMatchPyTorch) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with([&] { x.t().view({6}); }, "Use .reshape(...) instead"));
  EXPECT_TRUE(throws_with(
      [&] {
        x.view({4, -1});
      },
      "view: shape [4, -1] is invalid for input of size 6"));
  EXPECT_TRUE(throws_with(
      [&] {
        x.view({-1, -1});
      },
      "only one dimension can be inferred"));
  EXPECT_TRUE(throws_with([&] { x.view({-2, 3}); }, "invalid shape dimension -2"));
  EXPECT_TRUE(
      throws_with([&] { view(Tensor(), {1}); }, "view: argument 'self' is undefined"));
}

TEST(Reshape, CopiesOnlyWhenItMust) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(x.reshape({3, 2}).data_ptr(), x.data_ptr());
  Tensor r = x.t().reshape({6});
  EXPECT_NE(r.data_ptr(), x.data_ptr());
  EXPECT_EQ(values(r), std::vector<double>({0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(scalar_tensor(2.0).reshape({1, 1}).sizes(), IntList({1, 1}));
  EXPECT_TRUE(throws_with(
      [&] {
        x.reshape({4, 2});
      },
      "reshape: shape [4, 2] is invalid for input of size 6"));
}

TEST(Reshape, ACopyIsNotAViewSoInPlaceIsAllowed) {
  Tensor x = leaf({2, 3});
  Tensor copied = x.t().reshape({6});
  EXPECT_NO_THROW(copied.add_(1));
  EXPECT_FALSE(copied.is_view());
  // A reshape that views writes through to its base's gradient.
  Tensor base = x * 1;
  Tensor viewed = base.reshape({6});
  EXPECT_TRUE(viewed.is_view());
  viewed.mul_(2);
  base.sum().backward();
  EXPECT_EQ(values(x.grad()), std::vector<double>(6, 2.0));
}

TEST(Reshape, Gradcheck) {
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].t().reshape({-1, 2});
      },
      {leaf({2, 3})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].view({3, 2}) * 2;
      },
      {leaf({2, 3})}));
}

TEST(Flatten, MergesARangeOfDims) {
  Tensor x = iota({2, 3, 4, 5});
  EXPECT_EQ(x.flatten().sizes(), IntList({120}));
  EXPECT_EQ(x.flatten(1).sizes(), IntList({2, 60}));
  EXPECT_EQ(x.flatten(1, -2).sizes(), IntList({2, 12, 5}));
  EXPECT_EQ(x.flatten(2, 2).sizes(), x.sizes());
  EXPECT_EQ(scalar_tensor(3.0).flatten().sizes(), IntList({1}));
  EXPECT_TRUE(
      throws_with([&] { x.flatten(2, 1); }, "start_dim cannot come after end_dim"));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].transpose(0, 2).flatten(1); },
                {leaf({2, 3, 2})}));
}

// ---- squeeze, unsqueeze, expand ----

TEST(Squeeze, RemovesSizeOneDims) {
  Tensor x = iota({1, 3, 1, 2});
  EXPECT_EQ(x.squeeze().sizes(), IntList({3, 2}));
  EXPECT_EQ(x.squeeze(2).sizes(), IntList({1, 3, 2}));
  EXPECT_EQ(x.squeeze(-4).sizes(), IntList({3, 1, 2}));
  EXPECT_EQ(x.squeeze(1).sizes(), x.sizes());  // not size 1: unchanged
  EXPECT_EQ(x.squeeze().data_ptr(), x.data_ptr());
  EXPECT_TRUE(throws_index_error([&] { x.squeeze(4); }));
  EXPECT_TRUE(throws_with([&] { x.squeeze(4); },
                          "squeeze: dimension out of range (expected to be in range "
                          "of [-4, 3], but got 4)"));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].squeeze() * 3; },
                        {leaf({1, 3, 1})}));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].squeeze(-1); }, {leaf({2, 1})}));
}

TEST(Unsqueeze, InsertsADimWithPyTorchStrides) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(x.unsqueeze(0).sizes(), IntList({1, 2, 3}));
  EXPECT_EQ(x.unsqueeze(1).strides(), IntList({3, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).sizes(), IntList({2, 3, 1}));
  EXPECT_EQ(x.unsqueeze(-1).strides(), IntList({3, 1, 1}));
  EXPECT_EQ(scalar_tensor(1.0).unsqueeze(0).sizes(), IntList({1}));
  EXPECT_TRUE(throws_with([&] { x.unsqueeze(3); }, "expected to be in range of [-3, 2]"));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].unsqueeze(-2); },
                        {leaf({2, 3})}));
}

TEST(Expand, StretchesSizeOneDimsWithZeroStride) {
  Tensor x = iota({3, 1});
  Tensor e = x.expand({2, -1, 4});
  EXPECT_EQ(e.sizes(), IntList({2, 3, 4}));
  EXPECT_EQ(e.strides(), IntList({0, 1, 0}));
  EXPECT_EQ(e.data_ptr(), x.data_ptr());
  EXPECT_EQ(values(e.select(0, 1).select(0, 2)), std::vector<double>(4, 2));
  EXPECT_EQ(x.expand_as(zeros({3, 5})).sizes(), IntList({3, 5}));
}

TEST(Expand, ErrorsMatchPyTorch) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        x.expand({3, 3});
      },
      "expand: the expanded size of the tensor (3) must match the "
      "existing size (2) at non-singleton dimension 0"));
  EXPECT_TRUE(
      throws_with([&] { x.expand({3}); },
                  "the number of sizes provided (1) must "
                  "be greater or equal to the number of dimensions in the tensor (2)"));
  EXPECT_TRUE(throws_with(
      [&] {
        x.expand({-1, 2, 3});
      },
      "isn't allowed in a leading, non-existing dimension 0"));
}

TEST(Expand, GradientSumsOverStretchedDims) {
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].expand({2, 3, 4}) * 1.5;
      },
      {leaf({3, 1})}));
  Tensor x = leaf({3, 1});
  x.expand({2, 3, 4}).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), full({3, 1}, 8.0, kFloat64)));
}

// ---- transpose, t, permute ----

TEST(Transpose, SwapsSizesAndStrides) {
  Tensor x = iota({2, 3, 4});
  Tensor y = x.transpose(0, -1);
  EXPECT_EQ(y.sizes(), IntList({4, 3, 2}));
  EXPECT_EQ(y.strides(), IntList({1, 4, 12}));
  EXPECT_EQ(y.select(0, 1).select(0, 2).select(0, 1).item<double>(), 12 + 8 + 1);
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].transpose(-1, 1); },
                        {leaf({2, 3, 4})}));
}

TEST(T, TransposesUpToTwoDims) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(x.t().sizes(), IntList({3, 2}));
  EXPECT_EQ(values(x.t()), std::vector<double>({0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(iota({4}).t().sizes(), IntList({4}));
  EXPECT_EQ(scalar_tensor(1.0).t().dim(), 0);
  EXPECT_TRUE(throws_with(
      [] {
        iota({2, 3, 4}).t();
      },
      "t: expected a tensor with <= 2 dimensions, got shape [2, 3, 4]"));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].t(); }, {leaf({2, 3})}));
  Tensor y = leaf({2, 3}).t();
  EXPECT_EQ(y.grad_fn()->name(), "TBackward");
}

TEST(Permute, ReordersDimsAndInvertsInBackward) {
  Tensor x = iota({2, 3, 4});
  Tensor p = x.permute({2, 0, -2});
  EXPECT_EQ(p.sizes(), IntList({4, 2, 3}));
  EXPECT_EQ(p.strides(), IntList({1, 12, 4}));
  EXPECT_EQ(values(p.contiguous()),
            values(x.transpose(0, 2).transpose(1, 2).contiguous()));
  EXPECT_TRUE(throws_with(
      [&] {
        x.permute({0, 0, 1});
      },
      "permute: duplicate dims are not allowed, got [0, 0, 1]"));
  EXPECT_TRUE(throws_with([&] { x.permute({0, 1}); }, "permute: expected 3 dims"));
  EXPECT_TRUE(throws_with([&] { x.permute({0, 1, 3}); }, "dimension out of range"));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].permute({1, 2, 0}) * 2;
      },
      {leaf({2, 3, 4})}));
}

TEST(Contiguous, CopiesOnlyNonContiguousTensors) {
  Tensor x = iota({2, 3});
  EXPECT_EQ(contiguous(x).data_ptr(), x.data_ptr());
  Tensor c = contiguous(x.t());
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(values(c), std::vector<double>({0, 3, 1, 4, 2, 5}));
}

TEST(WrapDim, AcceptsNegativeDimsAndScalars) {
  EXPECT_EQ(wrap_dim(-1, 3, "op"), 2);
  EXPECT_EQ(wrap_dim(0, 0, "op"), 0);
  EXPECT_EQ(wrap_dim(-1, 0, "op"), 0);
  EXPECT_TRUE(throws_with([] { wrap_dim(-4, 3, "myop"); },
                          "myop: dimension out of range (expected to be in range of "
                          "[-3, 2], but got -4)"));
}

}  // namespace
}  // namespace tandem
