// Losses: nll_loss, cross_entropy (with label smoothing) and mse_loss
// against PyTorch's values, their gradients, and their errors.
#include <cmath>
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

// The inputs of every PyTorch value below: x is [3, 4], targets index it.
Tensor input() {
  return from_values({0.5, -1.0, 2.0, 0.25, 1.5, 0.0, -0.5, 3.0, -2.0, 1.0, 0.75, -0.25},
                     {3, 4});
}
Tensor weight() { return from_values({0.5, 2.0, 1.0, 0.25}, {4}); }
Tensor targets() { return tensor<int64_t>({2, 0, 3}); }
Tensor targets_with_ignored() { return tensor<int64_t>({2, 0, -100}); }

TEST(NllLoss, MatchesPyTorch) {
  Tensor x = input();
  EXPECT_TRUE(
      all_close(nll_loss(x, targets(), {}, kNone), from_values({-2.0, -1.5, 0.25}, {3})));
  EXPECT_DOUBLE_EQ(nll_loss(x, targets(), {}, kSum).item<double>(), -3.25);
  EXPECT_DOUBLE_EQ(nll_loss(x, targets()).item<double>(), -1.0833333333333333);
  // Weighted, one target ignored: the mean divides by the weights of the
  // counted targets only (w[2] + w[0] = 1.5).
  Tensor t = targets_with_ignored();
  EXPECT_TRUE(
      all_close(nll_loss(x, t, weight(), kNone), from_values({-2.0, -0.75, 0.0}, {3})));
  EXPECT_DOUBLE_EQ(nll_loss(x, t, weight(), kSum).item<double>(), -2.75);
  EXPECT_DOUBLE_EQ(nll_loss(x, t, weight(), kMean).item<double>(), -1.8333333333333333);
  // A custom ignore_index skips that class.
  EXPECT_DOUBLE_EQ(nll_loss(x, targets(), {}, kSum, /*ignore_index=*/0).item<double>(),
                   -1.75);
}

TEST(NllLoss, SingleSampleAndFloat32) {
  Tensor row = from_values({0.1, -0.7, 0.4}, {3});
  Tensor loss = nll_loss(row, scalar_tensor(1, kInt64), {}, kNone);
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_DOUBLE_EQ(loss.item<double>(), 0.7);
  Tensor x32 = input().to(kFloat32);
  Tensor l32 = nll_loss(x32, targets());
  EXPECT_EQ(l32.dtype(), kFloat32);
  EXPECT_NEAR(l32.item<double>(), -1.0833333333333333, 1e-6);
}

TEST(NllLoss, StridedInput) {
  // The transpose of a [4, 3] row-major buffer, viewed without a copy.
  std::vector<double> buffer = {
      0.5, -1.0, 2.0, 0.25, 1.5, 0.0, -0.5, 3.0, -2.0, 1.0, 0.75, -0.25};
  Tensor xt = from_blob(buffer.data(), {3, 4}, {1, 3}, kFloat64);
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_TRUE(all_close(nll_loss(xt, targets(), weight(), kNone),
                        nll_loss(xt.clone(), targets(), weight(), kNone),
                        0,
                        0));
  EXPECT_TRUE(all_close(
      cross_entropy(xt, targets()), cross_entropy(xt.clone(), targets()), 0, 0));
}

TEST(NllLoss, AllIgnoredMeanIsNan) {
  Tensor t = tensor<int64_t>({-100, -100, -100});
  EXPECT_TRUE(std::isnan(nll_loss(input(), t).item<double>()));
  EXPECT_EQ(nll_loss(input(), t, {}, kSum).item<double>(), 0.0);
}

TEST(NllLoss, GradientIsExact) {
  Tensor x = input().requires_grad_();
  nll_loss(x, targets_with_ignored(), weight()).backward();
  // d/dx[i, t_i] = -w[t_i] / (sum of counted weights = 1.5)
  std::vector<double> want(12, 0.0);
  want[0 * 4 + 2] = -1.0 / 1.5;
  want[1 * 4 + 0] = -0.5 / 1.5;
  EXPECT_TRUE(all_close(x.grad(), from_values(want, {3, 4}), 0, 0));
}

TEST(NllLoss, Gradcheck) {
  Tensor x = input().requires_grad_();
  for (Reduction r : {kNone, kSum, kMean}) {
    for (bool weighted : {false, true}) {
      Tensor w = weighted ? weight() : Tensor();
      EXPECT_TRUE(gradcheck(
          [&](const tensor_list& in) {
            return nll_loss(in[0], targets_with_ignored(), w, r);
          },
          {x}))
          << "reduction " << static_cast<int>(r) << " weighted " << weighted;
    }
  }
  Tensor row = from_values({0.1, -0.7, 0.4}, {3}).requires_grad_();
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return nll_loss(in[0], scalar_tensor(2, kInt64), {}, kNone);
      },
      {row}));
}

TEST(NllLoss, Errors) {
  Tensor x = zeros({30, 10});
  Tensor bad_class = zeros({30}, kInt64);
  bad_class.data_ptr<int64_t>()[7] = 12;
  try {
    nll_loss(x, bad_class);
    ADD_FAILURE() << "expected an IndexError";
  } catch (const IndexError& e) {
    EXPECT_STREQ(e.what(), "nll_loss: target 12 is out of bounds for 10 classes");
  }
  bad_class.data_ptr<int64_t>()[7] = -3;
  EXPECT_TRUE(throws_with([&] { nll_loss(x, bad_class); }, "target -3 is out of bounds"));
  EXPECT_TRUE(throws_with([&] { nll_loss(x, zeros({29}, kInt64)); },
                          "nll_loss: expected target of shape [30], got [29]"));
  EXPECT_TRUE(throws_with([&] { nll_loss(x, zeros({30})); },
                          "nll_loss: expected target of dtype int64 (class indices), "
                          "got float32"));
  EXPECT_TRUE(throws_with(
      [&] {
        nll_loss(zeros({2, 3, 4}), zeros({2}, kInt64));
      },
      "nll_loss: expected input of shape [N, C] or [C], got [2, 3, 4]"));
  EXPECT_TRUE(
      throws_with([&] { nll_loss(x, zeros({30}, kInt64), zeros({9})); },
                  "nll_loss: expected weight of shape [10] (one per class), got [9]"));
  EXPECT_TRUE(
      throws_with([&] { nll_loss(x, zeros({30}, kInt64), zeros({10}, kFloat64)); },
                  "nll_loss: expected weight of dtype float32"));
  EXPECT_TRUE(throws_with([&] { nll_loss(zeros({3}, kInt64), zeros({}, kInt64)); },
                          "nll_loss: expected 'input' to be float32 or float64"));
  EXPECT_TRUE(throws_with(
      [&] { nll_loss(x, zeros({30}, TensorOptions(kInt64).device("cpu:1"))); },
      "nll_loss: expected all tensors on the same device"));
}

TEST(CrossEntropy, MatchesPyTorch) {
  Tensor x = input();
  Tensor t = targets_with_ignored();
  // F.cross_entropy(x, t, weight=w, label_smoothing=0.2, reduction=...)
  EXPECT_TRUE(all_close(cross_entropy(x, t, weight(), kNone, -100, 0.2),
                        from_values({0.7240380109676501, 1.2680448869126666, 0.0}, {3}),
                        1e-12));
  EXPECT_NEAR(cross_entropy(x, t, weight(), kSum, -100, 0.2).item<double>(),
              1.9920828978803171,
              1e-12);
  EXPECT_NEAR(cross_entropy(x, t, weight(), kMean, -100, 0.2).item<double>(),
              1.3280552652535447,
              1e-12);
  // Unweighted: the mean counts only the targets that are not ignored.
  EXPECT_TRUE(all_close(cross_entropy(x, t, {}, kNone, -100, 0.2),
                        from_values({0.6817789984482534, 1.8647572543194326, 0.0}, {3}),
                        1e-12));
  EXPECT_NEAR(
      cross_entropy(x, t, {}, kSum, -100, 0.2).item<double>(), 2.546536252767686, 1e-12);
  EXPECT_NEAR(
      cross_entropy(x, t, {}, kMean, -100, 0.2).item<double>(), 1.273268126383843, 1e-12);
  // A single [C] sample: classes are dim 0.
  Tensor row = from_values({0.5, -1.0, 2.0, 0.25}, {4});
  EXPECT_NEAR(cross_entropy(row, scalar_tensor(1, kInt64)).item<double>(),
              3.3692789984482534,
              1e-12);
}

TEST(CrossEntropy, EqualsLogSoftmaxThenNll) {
  Tensor x = input();
  Tensor want = nll_loss(log_softmax(x, 1), targets(), weight());
  EXPECT_TRUE(all_close(cross_entropy(x, targets(), weight()), want, 1e-14, 0));
}

TEST(CrossEntropy, Gradcheck) {
  Tensor x = input().requires_grad_();
  for (Reduction r : {kNone, kSum, kMean}) {
    for (bool weighted : {false, true}) {
      for (double smoothing : {0.0, 0.3}) {
        Tensor w = weighted ? weight() : Tensor();
        EXPECT_TRUE(gradcheck(
            [&](const tensor_list& in) {
              return cross_entropy(in[0], targets_with_ignored(), w, r, -100, smoothing);
            },
            {x}))
            << "reduction " << static_cast<int>(r) << " weighted " << weighted
            << " smoothing " << smoothing;
      }
    }
  }
  Tensor row = from_values({0.5, -1.0, 2.0, 0.25}, {4}).requires_grad_();
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        return cross_entropy(in[0], scalar_tensor(3, kInt64), {}, kMean, -100, 0.1);
      },
      {row}));
}

TEST(CrossEntropy, Errors) {
  EXPECT_TRUE(throws_with(
      [] {
        cross_entropy(zeros({4, 3}), zeros({4}, kInt64), {}, kMean, -100, 1.5);
      },
      "cross_entropy: expected label_smoothing in [0, 1], got 1.5"));
  EXPECT_TRUE(throws_with(
      [] {
        cross_entropy(zeros({4, 3}), zeros({5}, kInt64));
      },
      "cross_entropy: expected target of shape [4], got [5]"));
}

TEST(MseLoss, ValuesAndGradcheck) {
  Tensor x = input();
  // The rows of x reversed, as PyTorch's x.flip(0).
  Tensor y = from_values(
      {-2.0, 1.0, 0.75, -0.25, 1.5, 0.0, -0.5, 3.0, 0.5, -1.0, 2.0, 0.25}, {3, 4});
  EXPECT_NEAR(mse_loss(x, y).item<double>(), 2.0104166666666665, 1e-14);
  EXPECT_NEAR(mse_loss(x, y, kSum).item<double>(), 24.125, 1e-14);
  Tensor none = mse_loss(x, y, kNone);
  EXPECT_EQ(none.sizes(), (IntList{3, 4}));
  EXPECT_DOUBLE_EQ(none.data_ptr<double>()[0], 6.25);
  Tensor a = x.clone().requires_grad_();
  Tensor b = y.clone().requires_grad_();
  for (Reduction r : {kNone, kSum, kMean}) {
    EXPECT_TRUE(gradcheck(
        [r](const tensor_list& in) { return mse_loss(in[0], in[1], r); }, {a, b}));
  }
}

TEST(MseLoss, RefusesToBroadcast) {
  EXPECT_TRUE(throws_with(
      [] {
        mse_loss(zeros({3}), zeros({3, 1}));
      },
      "mse_loss: expected target of the input's shape [3], got [3, 1]"));
  EXPECT_TRUE(throws_with([] { mse_loss(zeros({3}, kInt64), zeros({3}, kInt64)); },
                          "mse_loss: expected 'input' to be float32 or float64"));
}

}  // namespace
}  // namespace tandem
