// The schedules beyond StepLR: their errors, state_dict resumption and the
// details the PyTorch parity cases (tests/parity/lr_scheduler_test.cpp) do
// not show.
#include <cmath>
#include <numbers>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

double lr_of(const optim::Optimizer& opt, size_t group = 0) {
  return opt.param_groups()[group].options().get_lr();
}

TEST(CosineAnnealingLR, EqualsTheClosedFormWithoutOutsideChanges) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 0.2);
  optim::CosineAnnealingLR scheduler(opt, /*T_max=*/5, /*eta_min=*/0.01);
  for (int epoch = 1; epoch <= 23; ++epoch) {
    scheduler.step();
    const double closed =
        0.01 + (0.2 - 0.01) * (1 + std::cos(std::numbers::pi * epoch / 5)) / 2;
    EXPECT_NEAR(lr_of(opt), closed, 1e-12) << "epoch " << epoch;
  }
}

TEST(CosineAnnealingLR, StateDictKeepsTheBaseRates) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 0.1);
  optim::CosineAnnealingLR first(opt, /*T_max=*/4);
  first.step();
  first.step();
  const optim::StateDict saved = first.state_dict();
  const double lr_then = lr_of(opt);
  first.step();
  const double want = lr_of(opt);
  // A scheduler made on the decayed optimizer resumes from the saved state.
  opt.param_groups()[0].options().set_lr(lr_then);
  optim::CosineAnnealingLR resumed(opt, /*T_max=*/4);
  EXPECT_NE(resumed.base_lrs()[0], 0.1);
  resumed.load_state_dict(saved);
  EXPECT_EQ(resumed.base_lrs()[0], 0.1);
  EXPECT_EQ(resumed.step_count(), 2);
  resumed.step();
  EXPECT_DOUBLE_EQ(lr_of(opt), want);
  EXPECT_TRUE(throws_with([&] { optim::CosineAnnealingLR(opt, 0); },
                          "CosineAnnealingLR: T_max must be positive, got 0"));
}

TEST(LambdaLR, SetsTheEpochZeroRateAtOnceAndChecksTheCount) {
  Tensor a = tensor({1.0}).requires_grad_();
  Tensor b = tensor({1.0}).requires_grad_();
  optim::SGD opt({a}, 0.1);
  opt.add_param_group({{b}, std::make_unique<optim::SGDOptions>(1.0)});
  optim::LambdaLR scheduler(opt, [](int64_t epoch) { return 0.5 + epoch; });
  EXPECT_DOUBLE_EQ(lr_of(opt, 0), 0.05);
  EXPECT_DOUBLE_EQ(lr_of(opt, 1), 0.5);
  scheduler.step();
  EXPECT_DOUBLE_EQ(lr_of(opt, 0), 0.15);
  std::vector<optim::LambdaLR::LrLambda> one = {[](int64_t) { return 1.0; }};
  EXPECT_TRUE(
      throws_with([&] { optim::LambdaLR(opt, one); },
                  "LambdaLR: expected 2 lr_lambdas (one per parameter group), got 1"));
}

TEST(MultiStepLR, DecaysAtEachMilestone) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  optim::MultiStepLR scheduler(opt, {1, 3, 3}, 0.5);
  const std::vector<double> want = {0.5, 0.5, 0.125, 0.125};
  for (double lr : want) {
    scheduler.step();
    EXPECT_DOUBLE_EQ(lr_of(opt), lr);
  }
}

TEST(ExponentialLR, MultipliesEveryStep) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::Adam opt({w}, optim::AdamOptions(0.1));
  optim::ExponentialLR scheduler(opt, 0.5);
  scheduler.step();
  scheduler.step();
  EXPECT_DOUBLE_EQ(lr_of(opt), 0.025);
}

TEST(ReduceLROnPlateau, CountsPatienceAndCooldownAndResumes) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  optim::ReduceLROnPlateau scheduler(
      opt, optim::ReduceLROnPlateauOptions().patience(1).factor(0.5).cooldown(1));
  scheduler.step(1.0);  // best
  scheduler.step(1.0);  // bad 1
  EXPECT_EQ(lr_of(opt), 1.0);
  scheduler.step(1.0);  // bad 2 > patience: reduce, cooldown 1
  EXPECT_EQ(lr_of(opt), 0.5);
  EXPECT_EQ(scheduler.cooldown_counter(), 1);
  const optim::StateDict saved = scheduler.state_dict();
  optim::ReduceLROnPlateau resumed(
      opt, optim::ReduceLROnPlateauOptions().patience(1).factor(0.5).cooldown(1));
  resumed.load_state_dict(saved);
  EXPECT_EQ(resumed.best(), 1.0);
  EXPECT_EQ(resumed.last_epoch(), 3);
  resumed.step(1.0);  // in cooldown: not counted
  resumed.step(1.0);  // bad 1
  EXPECT_EQ(lr_of(opt), 0.5);
  resumed.step(1.0);  // bad 2: reduce
  EXPECT_EQ(lr_of(opt), 0.25);
  EXPECT_TRUE(throws_with([&] { resumed.load_state_dict({}); }, "missing key best"));
}

TEST(ReduceLROnPlateau, RespectsMinLrAndEps) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  optim::ReduceLROnPlateau scheduler(
      opt, optim::ReduceLROnPlateauOptions().patience(0).factor(0.1).min_lr(0.05));
  scheduler.step(1.0);
  scheduler.step(2.0);
  EXPECT_DOUBLE_EQ(lr_of(opt), 0.1);
  scheduler.step(2.0);
  EXPECT_DOUBLE_EQ(lr_of(opt), 0.05);
  scheduler.step(2.0);
  EXPECT_DOUBLE_EQ(lr_of(opt), 0.05);
}

TEST(ReduceLROnPlateau, RejectsBadOptionsNamingThem) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  EXPECT_TRUE(throws_with(
      [&] {
        optim::ReduceLROnPlateau(opt, optim::ReduceLROnPlateauOptions().factor(1.0));
      },
      "ReduceLROnPlateau: factor should be < 1.0, got 1"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::ReduceLROnPlateau(opt, optim::ReduceLROnPlateauOptions().patience(-1));
      },
      "ReduceLROnPlateau: patience must be >= 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::ReduceLROnPlateau(opt,
                                 optim::ReduceLROnPlateauOptions().min_lr({0.1, 0.2}));
      },
      "ReduceLROnPlateau: expected 1 min_lrs (one per parameter group), got 2"));
}

TEST(OneCycleLR, RefusesToStepPastTotalSteps) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, optim::SGDOptions(0.1).momentum(0.9));
  optim::OneCycleLR scheduler(opt, optim::OneCycleLROptions(1.0).total_steps(10));
  EXPECT_NEAR(lr_of(opt), 0.04, 1e-15);  // max_lr / div_factor
  for (int i = 0; i < 10; ++i) scheduler.step();
  // Python counts its constructor's step too.
  EXPECT_TRUE(throws_with([&] { scheduler.step(); },
                          "OneCycleLR: tried to step 12 times; the specified number of "
                          "total steps is 10"));
}

TEST(OneCycleLR, RejectsBadOptionsNamingThem) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD sgd({w}, 0.1);
  using optim::OneCycleLROptions;
  EXPECT_TRUE(throws_with([&] { optim::OneCycleLR(sgd, OneCycleLROptions(1.0)); },
                          "set either total_steps or both epochs and steps_per_epoch"));
  EXPECT_TRUE(
      throws_with([&] { optim::OneCycleLR(sgd, OneCycleLROptions(1.0).total_steps(0)); },
                  "expected a positive total_steps, got 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::OneCycleLR(sgd, OneCycleLROptions(1.0).epochs(2).steps_per_epoch(-1));
      },
      "expected a positive steps_per_epoch, got -1"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::OneCycleLR(sgd, OneCycleLROptions(1.0).total_steps(5).pct_start(1.5));
      },
      "expected a pct_start between 0 and 1, got 1.5"));
  EXPECT_TRUE(throws_with(
      [&] {
        optim::OneCycleLR(sgd,
                          OneCycleLROptions(std::vector<double>{1, 2}).total_steps(5));
      },
      "expected 1 values for max_lr"));
  Tensor v = tensor({1.0}).requires_grad_();
  optim::Adagrad adagrad({v});
  EXPECT_TRUE(throws_with(
      [&] { optim::OneCycleLR(adagrad, OneCycleLROptions(1.0).total_steps(5)); },
      "the optimizer must support momentum"));
}

TEST(OneCycleLR, CyclesRMSpropMomentumAndAdamWBeta1) {
  Tensor a = tensor({1.0}).requires_grad_();
  optim::RMSprop rmsprop({a});
  optim::OneCycleLR s1(rmsprop, optim::OneCycleLROptions(0.1).total_steps(4));
  const auto& r =
      static_cast<const optim::RMSpropOptions&>(rmsprop.param_groups()[0].options());
  EXPECT_DOUBLE_EQ(r.momentum(), 0.95);
  Tensor b = tensor({1.0}).requires_grad_();
  optim::AdamW adamw({b});
  optim::OneCycleLR s2(adamw,
                       optim::OneCycleLROptions(0.1).total_steps(4).pct_start(0.5));
  s2.step();  // the end of the first phase: the lowest momentum
  const auto& o =
      static_cast<const optim::AdamWOptions&>(adamw.param_groups()[0].options());
  EXPECT_DOUBLE_EQ(std::get<0>(o.betas()), 0.85);
  EXPECT_DOUBLE_EQ(std::get<1>(o.betas()), 0.999);
}

}  // namespace
}  // namespace tandem
