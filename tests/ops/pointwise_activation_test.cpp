// The parametric activations (leaky_relu, elu, selu, silu, mish, softplus,
// hardtanh, log_sigmoid, softsign, prelu): values at a few points against
// PyTorch 1.13, stability far from zero, in-place forms, and their errors.
// Gradients, second derivatives and float32 are checked by the op table
// (tests/consistency) and against PyTorch by tests/parity.
#include <cmath>
#include <limits>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::from_values;
using testing::throws_with;

Tensor points() { return from_values({-3.0, -0.5, 0.0, 0.5, 3.0}, {5}); }

// torch.nn.functional.<op>(torch.tensor([-3., -.5, 0., .5, 3.], dtype=float64)).
TEST(PointwiseActivation, MatchesPyTorch) {
  EXPECT_TRUE(all_close(leaky_relu(points()),
                        from_values({-0.03, -0.005, 0.0, 0.5, 3.0}, {5}),
                        1e-15,
                        1e-15));
  EXPECT_TRUE(all_close(
      elu(points()),
      from_values({-0.950212931632136, -0.3934693402873666, 0.0, 0.5, 3.0}, {5}),
      1e-14,
      1e-15));
  EXPECT_TRUE(all_close(selu(points()),
                        from_values({-1.6705687287671118,
                                     -0.6917581878028713,
                                     0.0,
                                     0.5253504936777402,
                                     3.1521029620664414},
                                    {5}),
                        1e-14,
                        1e-15));
  EXPECT_TRUE(all_close(silu(points()),
                        from_values({-0.14227761953270035,
                                     -0.1887703343990727,
                                     0.0,
                                     0.3112296656009273,
                                     2.8577223804672998},
                                    {5}),
                        1e-14,
                        1e-15));
  EXPECT_TRUE(all_close(mish(points()),
                        from_values({-0.1456474612756246,
                                     -0.22074377465173,
                                     0.0,
                                     0.3752452113048951,
                                     2.9865350049679575},
                                    {5}),
                        1e-14,
                        1e-15));
  EXPECT_TRUE(all_close(softplus(points()),
                        from_values({0.048587351573741958,
                                     0.47407698418010669,
                                     0.69314718055994529,
                                     0.97407698418010669,
                                     3.0485873515737421},
                                    {5}),
                        1e-14,
                        1e-15));
  EXPECT_TRUE(
      all_close(hardtanh(points()), from_values({-1.0, -0.5, 0.0, 0.5, 1.0}, {5}), 0, 0));
  EXPECT_TRUE(all_close(log_sigmoid(points()),
                        from_values({-3.0485873515737421,
                                     -0.97407698418010669,
                                     -0.69314718055994529,
                                     -0.47407698418010669,
                                     -0.048587351573741958},
                                    {5}),
                        1e-14,
                        1e-15));
  EXPECT_TRUE(all_close(softsign(points()),
                        from_values({-0.75, -1.0 / 3, 0.0, 1.0 / 3, 0.75}, {5}),
                        1e-15,
                        1e-15));
}

TEST(PointwiseActivation, Parameters) {
  EXPECT_TRUE(all_close(
      leaky_relu(points(), 0.5), from_values({-1.5, -0.25, 0.0, 0.5, 3.0}, {5}), 0, 0));
  // softplus(x, beta=2, threshold=1): x itself where 2x > 1.
  Tensor s = softplus(points(), 2.0, 1.0);
  EXPECT_DOUBLE_EQ(s[4].item<double>(), 3.0);
  EXPECT_NEAR(s[0].item<double>(), std::log1p(std::exp(-6.0)) / 2, 1e-16);
  EXPECT_TRUE(all_close(hardtanh(points(), -0.25, 2.0),
                        from_values({-0.25, -0.25, 0.0, 0.5, 2.0}, {5}),
                        0,
                        0));
}

TEST(PointwiseActivation, StableFarFromZero) {
  // exp(200) overflows float32 and float64 alike; the stable forms do not.
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    Tensor x = from_values({-200.0, 200.0}, {2}).to(dtype);
    Tensor ls = log_sigmoid(x).to(kFloat64);
    EXPECT_DOUBLE_EQ(ls[0].item<double>(), -200.0) << dtype;
    EXPECT_NEAR(ls[1].item<double>(), 0.0, 1e-80) << dtype;  // -exp(-200)
    Tensor sp = softplus(x, 1.0, /*threshold=*/1e9).to(kFloat64);
    EXPECT_NEAR(sp[0].item<double>(), 0.0, 1e-80) << dtype;
    EXPECT_DOUBLE_EQ(sp[1].item<double>(), 200.0) << dtype;
    Tensor m = mish(x).to(kFloat64);
    EXPECT_FALSE(std::isnan(m[0].item<double>())) << dtype;
    EXPECT_DOUBLE_EQ(m[1].item<double>(), 200.0) << dtype;
    Tensor xg = x.detach().requires_grad_();
    log_sigmoid(xg).sum().backward();
    EXPECT_TRUE(all_close(xg.grad().to(kFloat64), from_values({1.0, 0.0}, {2})));
  }
}

TEST(PointwiseActivation, NanPropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = from_values({nan}, {1});
  for (const Tensor& y : {leaky_relu(x),
                          elu(x),
                          silu(x),
                          mish(x),
                          softplus(x),
                          hardtanh(x),
                          log_sigmoid(x),
                          softsign(x)}) {
    EXPECT_TRUE(std::isnan(y.item<double>()));
  }
}

TEST(PointwiseActivation, InPlace) {
  Tensor x = points();
  Tensor& same = leaky_relu_(x, 0.1);
  EXPECT_EQ(&same, &x);
  EXPECT_TRUE(all_close(x, leaky_relu(points(), 0.1), 0, 0));
  Tensor e = points();
  elu_(e, 2.0);
  EXPECT_TRUE(all_close(e, elu(points(), 2.0), 0, 0));
  Tensor s = points();
  selu_(s);
  EXPECT_TRUE(all_close(s, selu(points()), 0, 0));
  Tensor h = points();
  hardtanh_(h, -2.0, 2.0);
  EXPECT_TRUE(all_close(h, hardtanh(points(), -2.0, 2.0), 0, 0));
  // A leaf that requires grad cannot be overwritten.
  Tensor leaf = points().requires_grad_();
  EXPECT_TRUE(throws_with([&] { elu_(leaf); }, "elu_"));
}

TEST(PointwiseActivation, GradientAtTheKinks) {
  // PyTorch's choices at x == 0 and at hardtanh's bounds.
  Tensor x = from_values({0.0, -1.0, 1.0}, {3}).requires_grad_();
  leaky_relu(x, 0.3).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from_values({0.3, 0.3, 1.0}, {3}), 0, 0));
  x.grad().zero_();
  hardtanh(x).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from_values({1.0, 0.0, 0.0}, {3}), 0, 0));
  x.grad().zero_();
  prelu(x, from_values({0.4}, {1})).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), from_values({0.4, 0.4, 1.0}, {3}), 0, 0));
}

TEST(PointwiseActivation, PreluWeightPerChannel) {
  Tensor x = from_values({-1.0, -2.0, 3.0, -4.0, 5.0, -6.0}, {1, 3, 2});
  Tensor w = from_values({0.1, 0.2, 0.3}, {3});
  EXPECT_TRUE(all_close(prelu(x, w),
                        from_values({-0.1, -0.2, 3.0, -0.8, 5.0, -1.8}, {1, 3, 2}),
                        1e-15,
                        1e-15));
}

TEST(PointwiseActivation, Errors) {
  EXPECT_TRUE(throws_with([] { leaky_relu(tensor({1, 2})); }, "leaky_relu"));
  EXPECT_TRUE(throws_with([] { silu(Tensor()); }, "silu"));
  EXPECT_TRUE(throws_with([] { hardtanh(points(), 1.0, -1.0); },
                          "hardtanh: expected min_val <= max_val, got min_val=1"));
  EXPECT_TRUE(throws_with([] { softplus(points(), 0.0); }, "softplus: beta"));
  EXPECT_TRUE(throws_with(
      [] {
        prelu(zeros({2, 4, 3}, kFloat64), full({3}, 0.25, kFloat64));
      },
      "prelu: weight has 3 parameters but input of shape [2, 4, 3] has 4 channels"));
  EXPECT_TRUE(throws_with(
      [] {
        prelu(zeros({2, 3}), full({3}, 0.25, kFloat64));
      },
      "prelu: expected weight of dtype float32"));
  EXPECT_TRUE(throws_with(
      [] {
        prelu(zeros({2, 3}), zeros({3, 1}));
      },
      "prelu: expected weight of shape [1] or [channels], got [3, 1]"));
}

}  // namespace
}  // namespace tandem
