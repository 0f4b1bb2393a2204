// SGD's update rule checked by hand on tiny tensors, its option checks, and
// the behaviour every optimizer shares (groups, zero_grad, skipping
// parameters without a gradient, closures, version counters).
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

Tensor param(std::vector<double> values, ScalarType dtype = kFloat64) {
  return tensor(values, dtype).requires_grad_();
}

void set_grad(Tensor& p, std::vector<double> values) {
  p.set_grad(tensor(values, p.dtype()));
}

TEST(SGD, PlainStepIsParamMinusLrTimesGrad) {
  Tensor w = param({1, 2, 3});
  optim::SGD opt({w}, optim::SGDOptions(0.1));
  set_grad(w, {0.5, -1, 2});
  opt.step();
  EXPECT_TRUE(all_close(w, tensor({0.95, 2.1, 2.8}, kFloat64), 0, 1e-15));
  EXPECT_TRUE(
      all_close(w.grad(), tensor({0.5, -1.0, 2.0}, kFloat64), 0, 0));  // untouched
}

TEST(SGD, MomentumBufferStartsAsTheGradientWithoutDampening) {
  Tensor w = param({1, -1});
  optim::SGD opt({w}, optim::SGDOptions(0.1).momentum(0.9).dampening(0.5));
  set_grad(w, {1, 2});
  opt.step();  // buf = g1 (no dampening on the first step)
  EXPECT_TRUE(all_close(w, tensor({1 - 0.1, -1 - 0.2}, kFloat64), 0, 1e-15));
  set_grad(w, {3, -4});
  opt.step();  // buf = 0.9 * g1 + 0.5 * g2
  double b0 = 0.9 * 1 + 0.5 * 3, b1 = 0.9 * 2 + 0.5 * -4;
  EXPECT_TRUE(
      all_close(w, tensor({0.9 - 0.1 * b0, -1.2 - 0.1 * b1}, kFloat64), 0, 1e-15));
  auto& state = static_cast<optim::SGDParamState&>(*opt.state().at(w.unsafe_impl()));
  EXPECT_TRUE(all_close(state.momentum_buffer(), tensor({b0, b1}, kFloat64), 0, 1e-15));
}

TEST(SGD, NesterovAndWeightDecay) {
  Tensor w = param({2.0});
  optim::SGD opt({w},
                 optim::SGDOptions(0.5).momentum(0.5).nesterov(true).weight_decay(0.1));
  set_grad(w, {1.0});
  opt.step();
  // d = 1 + 0.1 * 2 = 1.2; buf = 1.2; step = d + 0.5 * buf = 1.8
  double w1 = 2.0 - 0.5 * 1.8;
  EXPECT_NEAR(w.item<double>(), w1, 1e-15);
  set_grad(w, {-1.0});
  opt.step();
  double d = -1.0 + 0.1 * w1;
  double buf = 0.5 * 1.2 + d;
  EXPECT_NEAR(w.item<double>(), w1 - 0.5 * (d + 0.5 * buf), 1e-15);
}

TEST(SGD, Float32UpdatesInFloat32) {
  Tensor w = param({1, 2}, kFloat32);
  optim::SGD opt({w}, optim::SGDOptions(0.25).momentum(0.5));
  set_grad(w, {4, -8});
  opt.step();
  set_grad(w, {4, -8});
  opt.step();
  EXPECT_EQ(w.dtype(), kFloat32);
  // buf: g, then 1.5 g; total step 0.25 * 2.5 * g
  EXPECT_TRUE(all_close(w, tensor({1 - 2.5, 2 + 5.0}, kFloat32), 0, 0));
}

TEST(SGD, ChecksItsOptions) {
  Tensor w = param({1});
  EXPECT_TRUE(throws_with([&] { optim::SGD({w}, optim::SGDOptions(-0.1)); },
                          "SGD: invalid learning rate -0.1"));
  EXPECT_TRUE(
      throws_with([&] { optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true)); },
                  "nesterov momentum requires a momentum > 0 and zero dampening"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SGD({w},
                   optim::SGDOptions(0.1).momentum(0.9).dampening(0.1).nesterov(true));
      },
      "dampening 0.1"));
  EXPECT_TRUE(throws_with([&] { optim::SGD({w}, optim::SGDOptions(0.1).momentum(-1)); },
                          "invalid momentum"));
  EXPECT_TRUE(
      throws_with([&] { optim::SGD({w}, optim::SGDOptions(0.1).weight_decay(-1)); },
                  "invalid weight_decay"));
  // A group's own options are checked too.
  optim::SGD opt({w}, 0.1);
  Tensor v = param({1});
  EXPECT_TRUE(throws_with(
      [&] {
        opt.add_param_group({{v}, std::make_unique<optim::SGDOptions>(-1.0)});
      },
      "invalid learning rate"));
}

TEST(SGD, RefusesParametersItCannotUpdateInPlace) {
  Tensor strided = randn({3, 2}, kFloat64).t().detach().requires_grad_();
  optim::SGD opt({strided}, 0.1);
  strided.mutable_grad() = zeros({2, 3}, kFloat64);
  EXPECT_TRUE(throws_with([&] { opt.step(); }, "is not contiguous"));

  Tensor w = param({1, 2}, kFloat32);
  optim::SGD opt2({w}, 0.1);
  w.mutable_grad() = tensor({1.0, 2.0}, kFloat64);
  EXPECT_TRUE(throws_with([&] { opt2.step(); },
                          "SGD: the gradient has dtype float64 but its parameter"));
  w.mutable_grad() =
      tensor({1.0f, 2.0f}, TensorOptions(kFloat32).device(Device("cpu:1")));
  EXPECT_TRUE(throws_with([&] { opt2.step(); }, "the gradient is on cpu:1"));
  EXPECT_EQ(w._version(), 0u);

  Tensor ints = tensor(std::vector<int64_t>{1, 2});
  optim::SGD opt3({ints}, 0.1);
  ints.mutable_grad() = tensor(std::vector<int64_t>{1, 2});
  EXPECT_TRUE(throws_with([&] { opt3.step(); }, "must be float32 or float64, got int64"));
}

TEST(Optimizer, SkipsParametersWithoutGradient) {
  Tensor a = param({1, 2});
  Tensor b = param({3, 4});
  optim::SGD opt({a, b}, optim::SGDOptions(0.1).momentum(0.9));
  set_grad(b, {1, 1});
  opt.step();
  EXPECT_TRUE(all_close(a, tensor({1.0, 2.0}, kFloat64), 0, 0));
  EXPECT_TRUE(all_close(b, tensor({2.9, 3.9}, kFloat64), 0, 1e-15));
  EXPECT_EQ(opt.state().count(a.unsafe_impl()), 0u);
  EXPECT_EQ(opt.state().count(b.unsafe_impl()), 1u);
}

TEST(Optimizer, StepBumpsTheVersionCounter) {
  Tensor w = param({1});
  optim::SGD opt({w}, 0.1);
  set_grad(w, {1});
  uint32_t before = w._version();
  opt.step();
  EXPECT_EQ(w._version(), before + 1);
}

TEST(Optimizer, ZeroGradDropsOrZeroesGradients) {
  Tensor w = param({1, 2});
  optim::SGD opt({w}, 0.1);
  set_grad(w, {3, 4});
  opt.zero_grad(/*set_to_none=*/false);
  ASSERT_TRUE(w.grad().defined());
  EXPECT_TRUE(all_close(w.grad(), zeros({2}, kFloat64), 0, 0));
  opt.zero_grad();
  EXPECT_FALSE(w.grad().defined());
}

TEST(Optimizer, StepWithClosureReturnsItsLoss) {
  Tensor w = param({1, 2});
  optim::SGD opt({w}, 0.5);
  int calls = 0;
  Tensor loss = opt.step([&] {
    ++calls;
    EXPECT_TRUE(GradMode::is_enabled());
    opt.zero_grad();
    Tensor l = (w * w).sum();
    l.backward();
    return l;
  });
  EXPECT_EQ(calls, 1);
  EXPECT_DOUBLE_EQ(loss.item<double>(), 5.0);
  EXPECT_TRUE(all_close(w, tensor({0.0, 0.0}, kFloat64), 0, 0));  // w - 0.5 * 2w
  EXPECT_FALSE(opt.step().defined());
}

TEST(Optimizer, ParamGroupsHaveTheirOwnOptions) {
  Tensor a = param({1});
  Tensor b = param({1});
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<optim::SGDOptions>(0.5));
  optim::SGD opt(groups, optim::SGDOptions(0.1));
  ASSERT_EQ(opt.param_groups().size(), 2u);
  EXPECT_EQ(opt.size(), 2u);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  set_grad(a, {1});
  set_grad(b, {1});
  opt.step();
  EXPECT_DOUBLE_EQ(a.item<double>(), 0.9);
  EXPECT_DOUBLE_EQ(b.item<double>(), 0.5);

  static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).lr(0.2);
  opt.step();
  EXPECT_DOUBLE_EQ(a.item<double>(), 0.7);
}

TEST(Optimizer, AParameterBelongsToOneGroup) {
  Tensor a = param({1});
  EXPECT_TRUE(throws_with(
      [&] {
        optim::SGD({a, a}, 0.1);
      },
      "appears more than once in the optimizer"));
  optim::SGD opt({a}, 0.1);
  EXPECT_TRUE(throws_with([&] { opt.add_param_group({{a}}); }, "appears more than once"));
  Tensor b = param({2});
  opt.add_parameters({b});
  EXPECT_EQ(opt.param_groups().size(), 1u);
  EXPECT_EQ(opt.parameters().size(), 2u);
  Tensor non_leaf = b * 2;
  EXPECT_TRUE(throws_with([&] { opt.add_parameters({non_leaf}); }, "non-leaf"));
}

}  // namespace
}  // namespace tandem
