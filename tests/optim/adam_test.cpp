// Adam's and AdamW's update rules checked by hand (bias corrections, L2 vs
// decoupled weight decay, AMSGrad) and their option checks.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

// The textbook rule for one scalar, in double: what PyTorch documents.
struct ScalarAdam {
  double lr, beta1, beta2, eps, weight_decay;
  bool decoupled, amsgrad;
  double m = 0, v = 0, v_max = 0;
  int step = 0;

  double update(double p, double g) {
    ++step;
    if (decoupled)
      p *= 1 - lr * weight_decay;
    else
      g += weight_decay * p;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    v_max = std::max(v_max, v);
    double v_used = amsgrad ? v_max : v;
    double bc1 = 1 - std::pow(beta1, step), bc2 = 1 - std::pow(beta2, step);
    return p - lr / bc1 * m / (std::sqrt(v_used) / std::sqrt(bc2) + eps);
  }
};

template <typename Optimizer, typename Options>
void expect_matches_scalar_rule(Options options, ScalarAdam rule) {
  std::vector<double> p0 = {0.5, -1.5, 2.0};
  // Gradients that shrink, so the second moment falls and AMSGrad matters.
  std::vector<std::vector<double>> grads = {
      {4, -2, 0.5}, {0.1, 1, -0.5}, {0.01, -3, 0.2}};
  Tensor w = tensor(p0, kFloat64).requires_grad_();
  Optimizer opt({w}, options);
  std::vector<ScalarAdam> rules(p0.size(), rule);
  std::vector<double> want = p0;
  for (const auto& g : grads) {
    w.set_grad(tensor(g, kFloat64));
    opt.step();
    for (size_t i = 0; i < want.size(); ++i) want[i] = rules[i].update(want[i], g[i]);
    EXPECT_TRUE(all_close(w, tensor(want, kFloat64), 1e-14, 1e-15));
  }
  auto& state = static_cast<optim::AdamParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.step(), 3);
  EXPECT_NEAR(state.exp_avg()[0].item<double>(), rules[0].m, 1e-15);
  EXPECT_NEAR(state.exp_avg_sq()[0].item<double>(), rules[0].v, 1e-15);
  EXPECT_EQ(state.max_exp_avg_sq().defined(), rule.amsgrad);
}

TEST(Adam, MatchesTheScalarRule) {
  expect_matches_scalar_rule<optim::Adam>(optim::AdamOptions(0.1),
                                          {0.1, 0.9, 0.999, 1e-8, 0, false, false});
}

TEST(Adam, WeightDecayIsAddedToTheGradient) {
  expect_matches_scalar_rule<optim::Adam>(
      optim::AdamOptions(0.05).betas({0.8, 0.9}).eps(1e-3).weight_decay(0.5),
      {0.05, 0.8, 0.9, 1e-3, 0.5, false, false});
}

TEST(Adam, AmsgradNormalisesByTheLargestSecondMoment) {
  expect_matches_scalar_rule<optim::Adam>(
      optim::AdamOptions(0.1).betas(std::make_tuple(0.5, 0.6)).amsgrad(true),
      {0.1, 0.5, 0.6, 1e-8, 0, false, true});
}

TEST(AdamW, WeightDecayShrinksTheParameter) {
  expect_matches_scalar_rule<optim::AdamW>(optim::AdamWOptions(0.1).weight_decay(0.3),
                                           {0.1, 0.9, 0.999, 1e-8, 0.3, true, false});
}

TEST(AdamW, WithAmsgrad) {
  expect_matches_scalar_rule<optim::AdamW>(
      optim::AdamWOptions(0.1).betas({0.5, 0.6}).amsgrad(true),
      {0.1, 0.5, 0.6, 1e-8, 1e-2, true, true});
}

TEST(AdamW, DefaultsFollowPyTorch) {
  optim::AdamWOptions w;
  EXPECT_EQ(w.lr(), 1e-3);
  EXPECT_EQ(w.weight_decay(), 1e-2);
  EXPECT_EQ(std::get<1>(w.betas()), 0.999);
  optim::AdamOptions a;
  EXPECT_EQ(a.weight_decay(), 0);
  EXPECT_EQ(a.eps(), 1e-8);
  EXPECT_FALSE(a.amsgrad());
}

TEST(Adam, Float32StepStaysFloat32AndCloseToTheRule) {
  Tensor w = tensor({0.5f, -1.5f}).requires_grad_();
  optim::Adam opt({w}, optim::AdamOptions(0.1));
  w.set_grad(tensor({2.0f, -0.25f}));
  opt.step();
  EXPECT_EQ(w.dtype(), kFloat32);
  // The first step moves each weight by about lr against its gradient's sign.
  EXPECT_TRUE(all_close(w, tensor({0.4f, -1.4f}), 1e-6, 1e-6));
}

TEST(Adam, ChecksItsOptions) {
  Tensor w = tensor({1.0}).requires_grad_();
  EXPECT_TRUE(throws_with([&] { optim::Adam({w}, optim::AdamOptions(-1)); },
                          "Adam: invalid learning rate -1"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::Adam({w}, optim::AdamOptions().betas({1.0, 0.9}));
      },
      "invalid beta1 1"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::Adam({w}, optim::AdamOptions().betas({0.9, -0.1}));
      },
      "invalid beta2 -0.1"));
  EXPECT_TRUE(throws_with([&] { optim::AdamW({w}, optim::AdamWOptions().eps(-1)); },
                          "AdamW: invalid eps -1"));
  EXPECT_TRUE(
      throws_with([&] { optim::AdamW({w}, optim::AdamWOptions().weight_decay(-1)); },
                  "AdamW: invalid weight_decay -1"));
}

TEST(Adam, AFailedStepLeavesTheStateAlone) {
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  optim::Adam opt({w});
  w.set_grad(tensor({1.0, 1.0}));
  opt.step();
  w.mutable_grad() = tensor({1.0, 1.0, 1.0});
  EXPECT_TRUE(throws_with([&] { opt.step(); }, "Adam: the gradient has shape [3]"));
  auto& state = static_cast<optim::AdamParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.step(), 1);
}

}  // namespace
}  // namespace tandem
