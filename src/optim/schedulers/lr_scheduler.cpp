#include "tandem/optim/schedulers/lr_scheduler.h"

#include "tandem/ops/factory.h"

namespace tandem::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer) {}

void LRScheduler::step() {
  const std::vector<double> lrs = get_lrs();
  auto& groups = optimizer_.param_groups();
  TANDEM_INTERNAL_ASSERT(lrs.size() == groups.size(),
                         "get_lrs returned ",
                         lrs.size(),
                         " rates for ",
                         groups.size(),
                         " parameter groups");
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lrs[g]);
  ++step_count_;
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups())
    lrs.push_back(group.options().get_lr());
  return lrs;
}

StateDict LRScheduler::state_dict() const {
  return {{"step_count", tensor(std::vector<int64_t>{step_count_}).view({})}};
}

void LRScheduler::load_state_dict(const StateDict& state_dict) {
  auto it = state_dict.find("step_count");
  TANDEM_CHECK(it != state_dict.end(),
               "LRScheduler::load_state_dict: missing key step_count");
  TANDEM_CHECK(state_dict.size() == 1,
               "LRScheduler::load_state_dict: expected only ",
               "step_count, got ",
               state_dict.size(),
               " keys");
  TANDEM_CHECK(it->second.defined() && it->second.numel() == 1 &&
                   it->second.dtype() == kInt64 && it->second.item<int64_t>() >= 0,
               "LRScheduler::load_state_dict: step_count must be one int64 >= 0");
  step_count_ = it->second.item<int64_t>();
}

}  // namespace tandem::optim
