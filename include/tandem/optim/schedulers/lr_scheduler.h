// LRScheduler: the base of learning-rate schedules, as LibTorch's
// torch::optim::LRScheduler. A scheduler holds a reference to an optimizer
// (which must outlive it) and, on each step(), sets the learning rate of
// every parameter group to what get_lrs() computes.
//
//   tandem::optim::StepLR scheduler(optimizer, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 100; ++epoch) {
//     train_one_epoch();        // optimizer.step() inside
//     scheduler.step();
//   }
//
// Counting follows Python's torch.optim.lr_scheduler: after n calls of
// step(), the rates are those of Python's last_epoch == n. A schedule whose
// epoch-0 rate differs from the optimizer's (LambdaLR, OneCycleLR) sets it
// in its constructor, as Python's constructor does.
#pragma once

#include <cstdint>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

class LRScheduler {
 public:
  explicit LRScheduler(Optimizer& optimizer);
  virtual ~LRScheduler() = default;

  /// Sets each group's learning rate to get_lrs(), then counts the step.
  void step();
  /// How many times step() has run.
  int64_t step_count() const { return step_count_; }
  /// Each group's learning rate when the scheduler was made (Python's
  /// base_lrs).
  const std::vector<double>& base_lrs() const { return base_lrs_; }
  /// The learning rates the optimizer has now, one per group (Python's
  /// get_last_lr()).
  std::vector<double> get_last_lr() const { return get_current_lrs(); }

  /// {"step_count": 0-dim int64, "base_lrs": 1-D float64}, for
  /// checkpoints; the schedule's own arguments (step_size, gamma, ...) are
  /// not state.
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state_dict);

 protected:
  /// The learning rates for the step about to be counted (step_count()
  /// previous steps have run), one per parameter group.
  virtual std::vector<double> get_lrs() = 0;
  /// The optimizer's current learning rates, one per parameter group.
  std::vector<double> get_current_lrs() const;
  /// Sets each group's learning rate (one per group).
  void set_lrs(const std::vector<double>& lrs);
  Optimizer& optimizer() { return optimizer_; }

 private:
  Optimizer& optimizer_;
  int64_t step_count_ = 0;
  std::vector<double> base_lrs_;
};

}  // namespace tandem::optim
