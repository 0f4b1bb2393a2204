// RMSprop's and Adagrad's update rules checked against the textbook rule in
// double (PyTorch's documented formulas), their defaults, state and option
// checks. The float32/float64 steps against PyTorch itself are in
// tests/parity/optim_test.cpp.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

struct ScalarRMSprop {
  double lr, alpha, eps, weight_decay, momentum;
  bool centered;
  double square_avg = 0, grad_avg = 0, buf = 0;

  double update(double p, double g) {
    g += weight_decay * p;
    square_avg = alpha * square_avg + (1 - alpha) * g * g;
    double avg = square_avg;
    if (centered) {
      grad_avg = alpha * grad_avg + (1 - alpha) * g;
      avg -= grad_avg * grad_avg;
    }
    avg = std::sqrt(avg) + eps;
    if (momentum > 0) {
      buf = momentum * buf + g / avg;
      return p - lr * buf;
    }
    return p - lr * g / avg;
  }
};

struct ScalarAdagrad {
  double lr, lr_decay, weight_decay, eps, sum;
  int step = 0;

  double update(double p, double g) {
    ++step;
    g += weight_decay * p;
    const double clr = lr / (1 + (step - 1) * lr_decay);
    sum += g * g;
    return p - clr * g / (std::sqrt(sum) + eps);
  }
};

const std::vector<double> kStart = {0.5, -1.5, 2.0};
const std::vector<std::vector<double>> kGrads = {
    {4, -2, 0.5}, {0.1, 1, -0.5}, {0.01, -3, 0.2}, {-1, 0.5, 0.3}};

template <typename Optimizer, typename Options, typename Rule>
Optimizer expect_matches_scalar_rule(Tensor& w, Options options, Rule rule) {
  w = tensor(kStart, kFloat64).requires_grad_();
  Optimizer opt({w}, options);
  std::vector<Rule> rules(kStart.size(), rule);
  std::vector<double> want = kStart;
  for (const auto& g : kGrads) {
    w.set_grad(tensor(g, kFloat64));
    opt.step();
    for (size_t i = 0; i < want.size(); ++i) want[i] = rules[i].update(want[i], g[i]);
    EXPECT_TRUE(all_close(w, tensor(want, kFloat64), 1e-13, 1e-15));
  }
  return opt;
}

TEST(RMSprop, MatchesTheScalarRule) {
  Tensor w;
  auto opt = expect_matches_scalar_rule<optim::RMSprop>(
      w, optim::RMSpropOptions(0.01), ScalarRMSprop{0.01, 0.99, 1e-8, 0, 0, false});
  auto& state = static_cast<optim::RMSpropParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.step(), 4);
  EXPECT_TRUE(state.square_avg().defined());
  EXPECT_FALSE(state.momentum_buffer().defined());
  EXPECT_FALSE(state.grad_avg().defined());
}

TEST(RMSprop, WithWeightDecayAndMomentum) {
  Tensor w;
  expect_matches_scalar_rule<optim::RMSprop>(
      w,
      optim::RMSpropOptions(0.02).alpha(0.9).eps(1e-4).weight_decay(0.1).momentum(0.8),
      ScalarRMSprop{0.02, 0.9, 1e-4, 0.1, 0.8, false});
}

TEST(RMSprop, CenteredSubtractsTheSquaredMeanGradient) {
  Tensor w;
  auto opt = expect_matches_scalar_rule<optim::RMSprop>(
      w,
      optim::RMSpropOptions(0.01).alpha(0.8).centered(true).momentum(0.5),
      ScalarRMSprop{0.01, 0.8, 1e-8, 0, 0.5, true});
  auto& state = static_cast<optim::RMSpropParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_TRUE(state.grad_avg().defined());
  EXPECT_TRUE(state.momentum_buffer().defined());
}

TEST(RMSprop, DefaultsFollowPyTorch) {
  optim::RMSpropOptions o;
  EXPECT_EQ(o.lr(), 1e-2);
  EXPECT_EQ(o.alpha(), 0.99);
  EXPECT_EQ(o.eps(), 1e-8);
  EXPECT_EQ(o.weight_decay(), 0);
  EXPECT_EQ(o.momentum(), 0);
  EXPECT_FALSE(o.centered());
}

TEST(RMSprop, ChecksItsOptionsNamingThem) {
  Tensor w = tensor({1.0}).requires_grad_();
  EXPECT_TRUE(throws_with([&] { optim::RMSprop({w}, optim::RMSpropOptions(-1)); },
                          "RMSprop: invalid learning rate -1"));
  EXPECT_TRUE(throws_with([&] { optim::RMSprop({w}, optim::RMSpropOptions().eps(-1)); },
                          "RMSprop: invalid eps -1"));
  EXPECT_TRUE(
      throws_with([&] { optim::RMSprop({w}, optim::RMSpropOptions().momentum(-0.5)); },
                  "RMSprop: invalid momentum -0.5"));
  EXPECT_TRUE(
      throws_with([&] { optim::RMSprop({w}, optim::RMSpropOptions().weight_decay(-1)); },
                  "RMSprop: invalid weight_decay -1"));
  EXPECT_TRUE(
      throws_with([&] { optim::RMSprop({w}, optim::RMSpropOptions().alpha(-0.1)); },
                  "RMSprop: invalid alpha -0.1"));
}

TEST(Adagrad, MatchesTheScalarRule) {
  Tensor w;
  auto opt = expect_matches_scalar_rule<optim::Adagrad>(
      w, optim::AdagradOptions(0.1), ScalarAdagrad{0.1, 0, 0, 1e-10, 0});
  auto& state = static_cast<optim::AdagradParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.step(), 4);
  EXPECT_NEAR(state.sum()[0].item<double>(), 16 + 0.01 + 1e-4 + 1, 1e-12);
}

TEST(Adagrad, WithLrDecayWeightDecayAndAnInitialAccumulator) {
  Tensor w;
  expect_matches_scalar_rule<optim::Adagrad>(w,
                                             optim::AdagradOptions(0.2)
                                                 .lr_decay(0.5)
                                                 .weight_decay(0.3)
                                                 .initial_accumulator_value(0.25)
                                                 .eps(1e-3),
                                             ScalarAdagrad{0.2, 0.5, 0.3, 1e-3, 0.25});
}

TEST(Adagrad, DefaultsFollowPyTorch) {
  optim::AdagradOptions o;
  EXPECT_EQ(o.lr(), 1e-2);
  EXPECT_EQ(o.lr_decay(), 0);
  EXPECT_EQ(o.weight_decay(), 0);
  EXPECT_EQ(o.initial_accumulator_value(), 0);
  EXPECT_EQ(o.eps(), 1e-10);
}

TEST(Adagrad, ChecksItsOptionsNamingThem) {
  Tensor w = tensor({1.0}).requires_grad_();
  EXPECT_TRUE(throws_with([&] { optim::Adagrad({w}, optim::AdagradOptions(-0.1)); },
                          "Adagrad: invalid learning rate -0.1"));
  EXPECT_TRUE(
      throws_with([&] { optim::Adagrad({w}, optim::AdagradOptions().lr_decay(-1)); },
                  "Adagrad: invalid lr_decay -1"));
  EXPECT_TRUE(
      throws_with([&] { optim::Adagrad({w}, optim::AdagradOptions().weight_decay(-1)); },
                  "Adagrad: invalid weight_decay -1"));
  EXPECT_TRUE(throws_with(
      [&] { optim::Adagrad({w}, optim::AdagradOptions().initial_accumulator_value(-1)); },
      "Adagrad: invalid initial_accumulator_value -1"));
  EXPECT_TRUE(throws_with([&] { optim::Adagrad({w}, optim::AdagradOptions().eps(-1)); },
                          "Adagrad: invalid eps -1"));
}

TEST(Adagrad, AFailedStepLeavesTheStateAlone) {
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  optim::Adagrad opt({w});
  w.set_grad(tensor({1.0, 1.0}));
  opt.step();
  w.mutable_grad() = tensor({1.0, 1.0, 1.0});
  EXPECT_TRUE(throws_with([&] { opt.step(); }, "Adagrad: the gradient has shape [3]"));
  auto& state = static_cast<optim::AdagradParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.step(), 1);
}

TEST(RMSprop, Float32StepsStayFloat32) {
  Tensor w = tensor({0.5f, -1.5f}).requires_grad_();
  optim::RMSprop opt({w}, optim::RMSpropOptions(0.01).centered(true));
  w.set_grad(tensor({2.0f, -0.25f}));
  opt.step();
  EXPECT_EQ(w.dtype(), kFloat32);
  auto& state = static_cast<optim::RMSpropParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_EQ(state.grad_avg().dtype(), kFloat32);
}

}  // namespace
}  // namespace tandem
