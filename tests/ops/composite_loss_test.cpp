// The composite losses (binary_cross_entropy with and without logits, l1,
// smooth_l1, huber, kl_div, cosine_embedding, margin_ranking): values
// against PyTorch 1.13, stability of the logits form, reductions, and their
// errors. Gradients and second derivatives are checked by the op table
// (tests/consistency), and every loss against PyTorch by tests/parity.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::from_values;
using testing::throws_with;

TEST(CompositeLoss, BinaryCrossEntropyMatchesPyTorch) {
  Tensor x = from_values({0.2, 0.9, 0.5, 0.01}, {2, 2});
  Tensor y = from_values({0.0, 1.0, 1.0, 0.3}, {2, 2});
  EXPECT_NEAR(binary_cross_entropy(x, y).item<double>(), 0.6025593846064649, 1e-15);
  // Probabilities of exactly 0 and 1: each log is clamped at -100.
  EXPECT_DOUBLE_EQ(
      binary_cross_entropy(
          from_values({0.0, 1.0}, {2}), from_values({1.0, 0.0}, {2}), {}, kSum)
          .item<double>(),
      200.0);
}

TEST(CompositeLoss, BinaryCrossEntropyWithLogitsIsStable) {
  Tensor logits = from_values({-3.0, 0.5, 40.0, -100.0}, {2, 2});
  Tensor y = from_values({0.0, 1.0, 1.0, 0.3}, {2, 2});
  EXPECT_TRUE(all_close(
      binary_cross_entropy_with_logits(logits, y, {}, {}, kNone),
      from_values({0.048587351573741965, 0.4740769841801067, 0.0, 30.0}, {2, 2}),
      1e-14,
      1e-15));
  EXPECT_TRUE(all_close(
      binary_cross_entropy_with_logits(
          logits, y, {}, from_values({2.0, 0.5}, {2}), kNone),
      from_values({0.048587351573742055, 0.23703849209005334, 0.0, 15.0}, {2, 2}),
      1e-14,
      1e-15));
  // float32 logits far beyond exp's range stay finite, with finite gradients.
  Tensor big = from_values({-500.0, 500.0}, {2}).to(kFloat32).requires_grad_();
  Tensor loss =
      binary_cross_entropy_with_logits(big, from_values({1.0, 0.0}, {2}).to(kFloat32));
  EXPECT_FLOAT_EQ(loss.item<float>(), 500.0f);
  loss.backward();
  EXPECT_TRUE(all_close(big.grad(), from_values({-0.5, 0.5}, {2}).to(kFloat32)));
}

TEST(CompositeLoss, RegressionLossesMatchPyTorch) {
  Tensor a = from_values({0.0, 1.0, 2.5, -0.3}, {4});
  Tensor b = from_values({0.5, -1.0, 2.0, 0.0}, {4});
  EXPECT_NEAR(l1_loss(a, b).item<double>(), 0.825, 1e-15);
  EXPECT_NEAR(l1_loss(a, b, kSum).item<double>(), 3.3, 1e-15);
  EXPECT_TRUE(all_close(smooth_l1_loss(a, b, kNone),
                        from_values({0.125, 1.5, 0.125, 0.045}, {4}),
                        1e-15,
                        1e-15));
  EXPECT_TRUE(all_close(smooth_l1_loss(a, b, kNone, 2.0),
                        from_values({0.0625, 1.0, 0.0625, 0.0225}, {4}),
                        1e-15,
                        1e-15));
  EXPECT_TRUE(all_close(smooth_l1_loss(a, b, kNone, 0.0), l1_loss(a, b, kNone), 0, 0));
  EXPECT_TRUE(all_close(huber_loss(a, b, kNone, 0.4),
                        from_values({0.12, 0.72, 0.12, 0.045}, {4}),
                        1e-15,
                        1e-15));
}

TEST(CompositeLoss, KlDivReductions) {
  Tensor log_q = log(from_values({0.25, 0.75, 0.5, 0.5}, {2, 2}));
  Tensor p = from_values({0.5, 0.5, 0.0, 1.0}, {2, 2});
  Tensor none = kl_div(log_q, p, kNone);
  // p log(p / q), and 0 where p is 0.
  EXPECT_TRUE(all_close(
      none,
      from_values({0.5 * std::log(2.0), 0.5 * std::log(2.0 / 3), 0.0, std::log(2.0)},
                  {2, 2}),
      1e-15,
      1e-15));
  const double total = none.sum().item<double>();
  EXPECT_NEAR(kl_div(log_q, p, kSum).item<double>(), total, 1e-15);
  EXPECT_NEAR(kl_div(log_q, p, kMean).item<double>(), total / 4, 1e-15);
  EXPECT_NEAR(kl_div(log_q, p, kBatchMean).item<double>(), total / 2, 1e-15);
  // log_target: the target given as log-probabilities; the zero is -inf.
  Tensor log_p = log(from_values({0.5, 0.5, 0.25, 0.75}, {2, 2}));
  EXPECT_TRUE(all_close(
      kl_div(log_q, log_p, kNone, true), kl_div(log_q, exp(log_p), kNone), 1e-15, 1e-15));
  // A zero target has a finite gradient (0) in both operands.
  Tensor pg = p.clone().requires_grad_();
  Tensor qg = log_q.clone().requires_grad_();
  kl_div(qg, pg, kSum).backward();
  EXPECT_FALSE(std::isnan(pg.grad().sum().item<double>()));
  EXPECT_TRUE(all_close(qg.grad(), -p, 0, 0));
}

TEST(CompositeLoss, PairLossesMatchPyTorch) {
  // F.cosine_embedding_loss / F.margin_ranking_loss on these inputs.
  Tensor a = from_values({1.0, 0.0, 1.0, 1.0, -1.0, 2.0}, {3, 2});
  Tensor b = from_values({1.0, 1.0, -1.0, 1.0, 1.0, 0.5}, {3, 2});
  Tensor y = from_values({1.0, -1.0, -1.0}, {3});
  const double cos0 = 1 / std::sqrt(2.0), cos2 = 0.0;
  EXPECT_TRUE(all_close(cosine_embedding_loss(a, b, y, 0.0, kNone),
                        from_values({1 - cos0, 0.0, cos2}, {3}),
                        1e-12,
                        1e-12));
  EXPECT_TRUE(all_close(cosine_embedding_loss(a, b, y, -0.5, kNone),
                        from_values({1 - cos0, 0.5, 0.5}, {3}),
                        1e-12,
                        1e-12));
  Tensor x1 = from_values({1.0, 2.0, 3.0}, {3});
  Tensor x2 = from_values({2.0, 1.0, 3.0}, {3});
  EXPECT_TRUE(all_close(margin_ranking_loss(x1, x2, y, 0.5, kNone),
                        from_values({1.5, 1.5, 0.5}, {3}),
                        0,
                        0));
  EXPECT_DOUBLE_EQ(margin_ranking_loss(x1, x2, y).item<double>(), 2.0 / 3);
}

TEST(CompositeLoss, Errors) {
  Tensor x = zeros({4, 3}, kFloat64), y = zeros({4, 1}, kFloat64);
  EXPECT_TRUE(
      throws_with([&] { l1_loss(x, y); },
                  "l1_loss: expected target of the input's shape [4, 3], got [4, 1]"));
  EXPECT_TRUE(throws_with([&] { binary_cross_entropy_with_logits(x, y); },
                          "binary_cross_entropy_with_logits: expected target of the "
                          "input's shape [4, 3], got [4, 1]"));
  EXPECT_TRUE(throws_with([&] { smooth_l1_loss(x, x, kMean, -1.0); },
                          "smooth_l1_loss: beta must be non-negative, got -1"));
  EXPECT_TRUE(throws_with([&] { huber_loss(x, x, kMean, 0.0); },
                          "huber_loss: delta must be positive, got 0"));
  EXPECT_TRUE(throws_with(
      [&] { binary_cross_entropy(full({2}, 1.5, kFloat64), zeros({2}, kFloat64)); },
      "binary_cross_entropy: expected input values in [0, 1]"));
  EXPECT_TRUE(throws_with(
      [&] { binary_cross_entropy(x, x, zeros({2}, kFloat64)); },
      "binary_cross_entropy: expected weight broadcastable to the input's shape [4, 3], "
      "got [2]"));
  EXPECT_TRUE(throws_with(
      [&] { binary_cross_entropy_with_logits(x, x, {}, zeros({4}, kFloat64)); },
      "binary_cross_entropy_with_logits: expected pos_weight broadcastable"));
  EXPECT_TRUE(throws_with([&] { mse_loss(x, x, kBatchMean); },
                          "mse_loss: reduction batchmean is only for kl_div"));
  EXPECT_TRUE(throws_with([&] { l1_loss(x, x, kBatchMean); },
                          "l1_loss: reduction batchmean is only for kl_div"));
  EXPECT_TRUE(throws_with([&] { cross_entropy(x, zeros({4}, kInt64), {}, kBatchMean); },
                          "cross_entropy: reduction batchmean"));
  EXPECT_TRUE(throws_with(
      [&] {
        cosine_embedding_loss(x, zeros({4, 2}, kFloat64), zeros({4}, kFloat64));
      },
      "cosine_embedding_loss: expected input1 and input2 of one shape, got [4, 3] and "
      "[4, 2]"));
  EXPECT_TRUE(throws_with(
      [&] { cosine_embedding_loss(x, x, zeros({3}, kFloat64)); },
      "cosine_embedding_loss: expected target of shape [4] (one label per row of "
      "inputs [4, 3]), got [3]"));
  EXPECT_TRUE(throws_with(
      [&] { margin_ranking_loss(zeros({3}), zeros({3}), zeros({4})); },
      "margin_ranking_loss: expected target of the inputs' shape [3], got [4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        kl_div(x, zeros({4, 3}));
      },
      "kl_div: expected target of dtype float64"));
}

}  // namespace
}  // namespace tandem
