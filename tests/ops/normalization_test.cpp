// batch_norm and layer_norm against their formulas written with elementwise
// ops: training and evaluation, the running-statistics update (unbiased
// variance), optional affine parameters, and errors. gradcheck runs in
// tests/consistency, PyTorch parity in tests/parity.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

constexpr double kEps = 1e-5;

// Per-channel mean and biased variance of [N, C, ...], shaped to broadcast.
struct Moments {
  Tensor mean, var;
};

Moments channel_moments(const Tensor& x) {
  IntList dims = {0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Tensor m = mean(x, dims, /*keepdim=*/true);
  return {m, mean((x - m) * (x - m), dims, true)};
}

// [C] seen as [1, C, 1, ...] for an input of `ndim` dims.
Tensor per_channel(const Tensor& v, int64_t ndim) {
  IntList shape(ndim, 1);
  shape[1] = v.size(0);
  return v.reshape(shape);
}

TEST(BatchNorm, TrainingNormalisesWithTheBatchStatistics) {
  Generator gen(1);
  Tensor x = randn({4, 3, 5, 5}, gen, kFloat64) * 2 + 1;
  Tensor w = randn({3}, gen, kFloat64), b = randn({3}, gen, kFloat64);
  Tensor running_mean = zeros({3}, kFloat64), running_var = ones({3}, kFloat64);
  Tensor y = batch_norm(x, running_mean, running_var, w, b, /*training=*/true);
  const Moments m = channel_moments(x);
  Tensor want = (x - m.mean) / sqrt(m.var + kEps) * per_channel(w, 4) + per_channel(b, 4);
  EXPECT_TRUE(all_close(y, want, 1e-12, 1e-12));
  // Running statistics: 0.9 * old + 0.1 * batch, the variance unbiased.
  const double count = 4 * 5 * 5;
  EXPECT_TRUE(all_close(running_mean, m.mean.flatten() * 0.1, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(
      running_var, m.var.flatten() * (count / (count - 1)) * 0.1 + 0.9, 1e-12, 1e-12));
}

TEST(BatchNorm, EvaluationUsesTheRunningStatistics) {
  Generator gen(2);
  Tensor x = randn({6, 3}, gen, kFloat64);
  Tensor running_mean = randn({3}, gen, kFloat64);
  Tensor running_var = rand({3}, gen, kFloat64) + 0.5;
  Tensor w = randn({3}, gen, kFloat64), b = randn({3}, gen, kFloat64);
  const Tensor mean_before = running_mean.clone(), var_before = running_var.clone();
  Tensor xg = x.clone().requires_grad_();
  Tensor y = batch_norm(xg, running_mean, running_var, w, b);
  EXPECT_TRUE(all_close(y, (x - running_mean) / sqrt(running_var + kEps) * w + b));
  EXPECT_TRUE(equal(running_mean, mean_before));
  EXPECT_TRUE(equal(running_var, var_before));
  // The statistics are constants: the input's gradient is the scale only.
  y.sum().backward();
  EXPECT_TRUE(all_close(xg.grad(), (w / sqrt(running_var + kEps)).expand({6, 3})));
}

TEST(BatchNorm, SavedStatisticsIgnoreLaterUpdates) {
  // Evaluation saves a copy of the running statistics: a training step
  // between forward and backward does not change the gradient.
  Tensor running_mean = zeros({2}, kFloat64), running_var = full({2}, 4.0, kFloat64);
  Tensor x = randn({5, 2}, kFloat64).requires_grad_();
  Tensor y = batch_norm(x, running_mean, running_var);
  batch_norm(randn({5, 2}, kFloat64) * 10, running_mean, running_var, {}, {}, true, 1.0);
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), full({5, 2}, 1 / std::sqrt(4 + kEps), kFloat64)));
}

TEST(BatchNorm, ThreeDimensionalInputMomentumAndNoStatistics) {
  Generator gen(3);
  Tensor x = randn({3, 2, 7}, gen, kFloat64);
  const Moments m = channel_moments(x);
  Tensor running_mean = ones({2}, kFloat64), running_var = ones({2}, kFloat64);
  Tensor y = batch_norm(x, running_mean, running_var, {}, {}, true, /*momentum=*/1.0);
  EXPECT_TRUE(all_close(y, (x - m.mean) / sqrt(m.var + kEps), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(running_mean, m.mean.flatten(), 1e-12, 1e-12));
  // Without running statistics, training mode still normalises.
  EXPECT_TRUE(all_close(batch_norm(x, {}, {}, {}, {}, true), y, 1e-12, 1e-12));
}

TEST(BatchNorm, Float32MatchesFloat64) {
  Generator gen(4);
  Tensor x = randn({8, 4, 6, 6}, gen, kFloat64) * 3 + 5;
  Tensor y64 = batch_norm(x, {}, {}, {}, {}, true);
  Tensor y32 = batch_norm(x.to(kFloat32), {}, {}, {}, {}, true);
  EXPECT_EQ(y32.dtype(), kFloat32);
  EXPECT_TRUE(all_close(y32, y64.to(kFloat32), 1e-4, 1e-5));
}

TEST(BatchNorm, Errors) {
  Tensor x = zeros({4, 3, 5, 5});
  Tensor c = zeros({3});
  EXPECT_TRUE(
      throws_with([&] { batch_norm(zeros({3}), c, c); },
                  "batch_norm: expected an input [N, C, ...] with at least 2 dims, "
                  "got shape [3]"));
  EXPECT_TRUE(
      throws_with([&] { batch_norm(x, c, c, zeros({4})); },
                  "batch_norm: expected weight of shape [3] (one value per channel "
                  "of input of shape [4, 3, 5, 5]), got [4]"));
  EXPECT_TRUE(throws_with([&] { batch_norm(x, zeros({2}), c); },
                          "batch_norm: expected running_mean of shape [3]"));
  EXPECT_TRUE(throws_with([&] { batch_norm(x, {}, {}); },
                          "batch_norm: running_mean and running_var must be defined in "
                          "evaluation mode (training=false)"));
  EXPECT_TRUE(throws_with(
      [&] {
        batch_norm(zeros({1, 3}), c, c, {}, {}, true);
      },
      "batch_norm: expected more than 1 value per channel when "
      "training, got input of shape [1, 3]"));
  EXPECT_TRUE(
      throws_with([&] { batch_norm(x, zeros({3}, kFloat64), c); },
                  "batch_norm: expected running_mean of dtype float32 (as input), "
                  "got float64"));
  EXPECT_TRUE(throws_with([&] { batch_norm(x, c, c, c.to("cpu:1")); },
                          "batch_norm: expected all tensors on the same device"));
}

TEST(LayerNorm, NormalisesTheTrailingDims) {
  Generator gen(5);
  Tensor x = randn({2, 3, 4}, gen, kFloat64) * 2 - 1;
  Tensor m = mean(x, {-1}, true);
  Tensor v = mean((x - m) * (x - m), {-1}, true);
  EXPECT_TRUE(all_close(layer_norm(x, {4}), (x - m) / sqrt(v + kEps), 1e-12, 1e-12));

  Tensor w = randn({3, 4}, gen, kFloat64), b = randn({3, 4}, gen, kFloat64);
  Tensor m2 = mean(x, {-2, -1}, true);
  Tensor v2 = mean((x - m2) * (x - m2), {-2, -1}, true);
  EXPECT_TRUE(all_close(layer_norm(x, {3, 4}, w, b, 1e-3),
                        (x - m2) / sqrt(v2 + 1e-3) * w + b,
                        1e-12,
                        1e-12));
}

TEST(LayerNorm, Errors) {
  Tensor x = zeros({2, 3, 4});
  EXPECT_TRUE(throws_with([&] { layer_norm(x, {5}); },
                          "layer_norm: normalized_shape [5] does not match the last dims "
                          "of input of shape [2, 3, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        layer_norm(x, {2, 3, 4, 5});
      },
      "layer_norm: normalized_shape [2, 3, 4, 5] does not match"));
  EXPECT_TRUE(
      throws_with([&] { layer_norm(x, {4}, zeros({3})); },
                  "layer_norm: expected weight of shape [4] (normalized_shape), got "
                  "[3]"));
  EXPECT_TRUE(throws_with([&] { layer_norm(x, {}); },
                          "layer_norm: normalized_shape must not be empty"));
}

}  // namespace
}  // namespace tandem
