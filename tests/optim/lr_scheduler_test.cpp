// StepLR's schedule (the step count of Python's torch.optim.lr_scheduler),
// per-group rates, and the scheduler's state_dict.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::throws_with;

TEST(StepLR, DecaysEveryStepSizeStepsLikePyTorch) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 0.1);
  optim::StepLR scheduler(opt, /*step_size=*/3, /*gamma=*/0.5);
  // torch.optim.lr_scheduler.StepLR(SGD(lr=0.1), 3, 0.5), lr after each step().
  const std::vector<double> want = {0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025};
  for (double lr : want) {
    scheduler.step();
    EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), lr);
  }
  EXPECT_EQ(scheduler.step_count(), 7);
}

TEST(StepLR, ScalesEachGroupsOwnRate) {
  Tensor a = tensor({1.0}).requires_grad_();
  Tensor b = tensor({1.0}).requires_grad_();
  optim::Adam opt({a}, optim::AdamOptions(0.01));
  opt.add_param_group({{b}, std::make_unique<optim::AdamOptions>(0.2)});
  optim::StepLR scheduler(opt, /*step_size=*/1);
  scheduler.step();
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.001);
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options().get_lr(), 0.02);
}

TEST(StepLR, StateDictResumesTheCount) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  optim::StepLR first(opt, /*step_size=*/2, /*gamma=*/0.5);
  first.step();
  optim::StepLR resumed(opt, /*step_size=*/2, /*gamma=*/0.5);
  resumed.load_state_dict(first.state_dict());
  resumed.step();
  EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), 0.5);
  EXPECT_TRUE(
      throws_with([&] { resumed.load_state_dict({}); }, "missing key step_count"));
}

TEST(StepLR, RejectsAZeroStepSize) {
  Tensor w = tensor({1.0}).requires_grad_();
  optim::SGD opt({w}, 1.0);
  EXPECT_TRUE(throws_with([&] { optim::StepLR(opt, 0); }, "step_size must be positive"));
}

}  // namespace
}  // namespace tandem
