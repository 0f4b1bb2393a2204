// Slicing views (narrow, select, split, chunk): geometry and values,
// PyTorch's chunking rule, gradients, and range errors.
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
using testing::throws_index_error;
using testing::throws_with;
using testing::values;

// ---- narrow, select ----

TEST(Narrow, ViewsARangeOfOneDim) {
  Tensor x = iota({3, 4});
  Tensor n = x.narrow(1, 1, 2);
  EXPECT_EQ(n.sizes(), IntList({3, 2}));
  EXPECT_EQ(n.storage_offset(), 1);
  EXPECT_EQ(values(n), std::vector<double>({1, 2, 5, 6, 9, 10}));
  EXPECT_EQ(values(x.narrow(0, -1, 1)), std::vector<double>({8, 9, 10, 11}));
  EXPECT_EQ(x.narrow(0, 3, 0).sizes(), IntList({0, 4}));
  n.fill_(-1);
  EXPECT_EQ(x.select(0, 0).select(0, 1).item<double>(), -1);
}

TEST(Narrow, ErrorsMatchPyTorch) {
  Tensor x = iota({2, 3});
  EXPECT_TRUE(throws_with([&] { x.narrow(0, 1, 5); },
                          "narrow: start (1) + length (5) exceeds dimension size (2)"));
  EXPECT_TRUE(throws_with([&] { x.narrow(0, 0, -1); }, "length must be non-negative"));
  EXPECT_TRUE(throws_index_error([&] { x.narrow(0, -5, 1); }));
  EXPECT_TRUE(throws_index_error([&] { x.narrow(2, 0, 1); }));
  EXPECT_TRUE(throws_with([] { scalar_tensor(1.0).narrow(0, 0, 1); },
                          "narrow: cannot be applied to a 0-dim tensor"));
}

TEST(Narrow, Gradcheck) {
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].narrow(-1, 1, 2); },
                        {leaf({3, 4})}));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].narrow(0, -2, 2) * 3; },
                        {leaf({3, 4})}));
}

TEST(Select, DropsTheDim) {
  Tensor x = iota({3, 4});
  EXPECT_EQ(values(x.select(1, 2)), std::vector<double>({2, 6, 10}));
  EXPECT_EQ(values(x[-1]), std::vector<double>({8, 9, 10, 11}));
  EXPECT_EQ(x.select(0, 1).data_ptr(), x.narrow(0, 1, 1).data_ptr());
  EXPECT_TRUE(throws_index_error([&] { x.select(0, 5); }));
  EXPECT_TRUE(throws_with([&] { x.select(0, 5); },
                          "select: index 5 is out of range for dimension 0 with size 3"));
  EXPECT_TRUE(
      throws_with([&] { x.select(1, -5); },
                  "select: index -5 is out of range for dimension 1 with size 4"));
  EXPECT_TRUE(throws_index_error([] { scalar_tensor(1.0).select(0, 0); }));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].select(-1, -2); },
                        {leaf({3, 4})}));
}

TEST(Views, InPlaceOnAViewOfATensorThatRequiresGradIsRecordedInTheBase) {
  // PyTorch 1.13's numbers (see Note [Writing through a view]).
  Tensor a = iota({2, 3}).requires_grad_();
  Tensor y = a * 2;
  y.narrow(0, 0, 1).add_(1);
  y.t().mul_(2);
  EXPECT_EQ(values(y), std::vector<double>({2, 6, 10, 12, 16, 20}));
  (y * iota({2, 3})).sum().backward();
  EXPECT_EQ(values(a.grad()), std::vector<double>({0, 4, 8, 12, 16, 20}));
  // Without autograd a view is an ordinary tensor.
  Tensor z = iota({2, 3});
  z.narrow(0, 0, 1).add_(1);
  EXPECT_EQ(values(z)[0], 1);
}

TEST(Views, InPlaceOnAViewWithAnOlderHistoryThanItsBaseIsRefused) {
  Tensor y = iota({2, 3}).requires_grad_() * 2;
  Tensor row = y[1];
  y[0] = 5.0;  // y's history changes; row still reads the older one
  EXPECT_TRUE(throws_with([&] { row.mul_(2); },
                          "mul_: this view (shape [3]) does not carry its base's current "
                          "history"));
  Tensor again = y[1];
  again.mul_(2);
  EXPECT_EQ(values(y)[3], 12);
  Tensor no_grad_view;
  {
    NoGradGuard no_grad;
    no_grad_view = y[0];
  }
  EXPECT_TRUE(throws_with([&] { no_grad_view.add_(1); }, "made under NoGradGuard"));
  no_grad_view.fill_(1);  // an overwrite needs no old history
  EXPECT_EQ(values(y)[0], 1);
}

TEST(Views, IndexingAndAssigningAnOutOfRangeRowNamesTheSize) {
  Tensor x = iota({3, 4});
  EXPECT_TRUE(throws_index_error([&] { x[3] = 1.0; }));
  EXPECT_TRUE(
      throws_with([&] { x[-4] = ones({4}, kFloat64); },
                  "select: index -4 is out of range for dimension 0 with size 3"));
  EXPECT_TRUE(throws_with([] { scalar_tensor(1.0)[0]; },
                          "select: cannot be applied to a 0-dim tensor"));
}

// ---- chunk, split ----

std::vector<IntList> shapes(const std::vector<Tensor>& ts) {
  std::vector<IntList> out;
  for (const Tensor& t : ts) out.push_back(t.sizes());
  return out;
}

TEST(Chunk, UsesCeilSizedChunksLikePyTorch) {
  EXPECT_EQ(shapes(iota({5}).chunk(3)), std::vector<IntList>({{2}, {2}, {1}}));
  // ceil(6 / 4) = 2, so only 3 chunks.
  EXPECT_EQ(shapes(iota({6}).chunk(4)), std::vector<IntList>({{2}, {2}, {2}}));
  EXPECT_EQ(shapes(iota({0}).chunk(3)), std::vector<IntList>({{0}, {0}, {0}}));
  auto parts = iota({2, 5}).chunk(2, -1);
  EXPECT_EQ(shapes(parts), std::vector<IntList>({{2, 3}, {2, 2}}));
  EXPECT_EQ(values(parts[1]), std::vector<double>({3, 4, 8, 9}));
  EXPECT_TRUE(throws_with([] { iota({3}).chunk(0); },
                          "chunk: expected chunks to be greater than 0, got 0"));
}

TEST(Split, BySizeAndByList) {
  Tensor x = iota({7, 2});
  EXPECT_EQ(shapes(x.split(3)), std::vector<IntList>({{3, 2}, {3, 2}, {1, 2}}));
  auto parts = x.split(IntList{1, 0, 6});
  EXPECT_EQ(shapes(parts), std::vector<IntList>({{1, 2}, {0, 2}, {6, 2}}));
  EXPECT_EQ(values(parts[2])[0], 2);
  EXPECT_TRUE(throws_with(
      [&] {
        x.split(IntList{1, 2});
      },
      "split: expected split_sizes to sum exactly to 7"));
  EXPECT_TRUE(throws_with([&] { x.split(0); }, "split_size can only be 0 if"));
}

TEST(Split, GradientOfAllOrSomePieces) {
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        auto p = in[0].chunk(3, 1);
        return p[0] * 1 + p[1] * 2 + p[2].narrow(1, 0, 1) * 3;
      },
      {leaf({2, 7})}));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return in[0].split(IntList{2, 1}, 0)[1];  // the other piece gets zeros
      },
      {leaf({3, 2})}));
  Tensor y = leaf({4}).chunk(2)[0];
  EXPECT_EQ(y.grad_fn()->name(), "SplitBackward");
}

}  // namespace
}  // namespace tandem
