#include "tandem/optim/schedulers/lr_scheduler.h"

#include "tandem/ops/factory.h"

namespace tandem::optim {

LRScheduler::LRScheduler(Optimizer& optimizer)
    : optimizer_(optimizer), base_lrs_(get_current_lrs()) {}

void LRScheduler::step() {
  set_lrs(get_lrs());
  ++step_count_;
}

void LRScheduler::set_lrs(const std::vector<double>& lrs) {
  auto& groups = optimizer_.param_groups();
  TANDEM_INTERNAL_ASSERT(lrs.size() == groups.size(),
                         "a schedule computed ",
                         lrs.size(),
                         " rates for ",
                         groups.size(),
                         " parameter groups");
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lrs[g]);
}

std::vector<double> LRScheduler::get_current_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups())
    lrs.push_back(group.options().get_lr());
  return lrs;
}

StateDict LRScheduler::state_dict() const {
  return {{"step_count", tensor(std::vector<int64_t>{step_count_}).view({})},
          {"base_lrs", tensor(base_lrs_, kFloat64)}};
}

void LRScheduler::load_state_dict(const StateDict& state_dict) {
  auto it = state_dict.find("step_count");
  TANDEM_CHECK(it != state_dict.end(),
               "LRScheduler::load_state_dict: missing key step_count");
  TANDEM_CHECK(it->second.defined() && it->second.numel() == 1 &&
                   it->second.dtype() == kInt64 && it->second.item<int64_t>() >= 0,
               "LRScheduler::load_state_dict: step_count must be one int64 >= 0");
  std::vector<double> base_lrs = base_lrs_;
  // base_lrs is optional: checkpoints from before it was saved lack it.
  auto base = state_dict.find("base_lrs");
  if (base != state_dict.end()) {
    const Tensor& t = base->second;
    TANDEM_CHECK(t.defined() && t.dim() == 1 &&
                     t.numel() == static_cast<int64_t>(base_lrs_.size()),
                 "LRScheduler::load_state_dict: base_lrs must be a 1-D tensor of ",
                 base_lrs_.size(),
                 " rates (one per parameter group)");
    Tensor values = t.to(kFloat64).contiguous();
    base_lrs.assign(values.data_ptr<double>(), values.data_ptr<double>() + t.numel());
  }
  for (const auto& [key, value] : state_dict) {
    TANDEM_CHECK(key == "step_count" || key == "base_lrs",
                 "LRScheduler::load_state_dict: unexpected key ",
                 key);
  }
  step_count_ = it->second.item<int64_t>();
  base_lrs_ = std::move(base_lrs);
}

}  // namespace tandem::optim
