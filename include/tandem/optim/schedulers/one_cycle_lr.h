// OneCycleLR: the 1cycle policy (Smith & Topin), as Python's
// torch.optim.lr_scheduler.OneCycleLR. The rate rises from
// max_lr / div_factor to max_lr over the first pct_start of total_steps,
// then falls to max_lr / div_factor / final_div_factor (three_phase: back
// to the initial rate first, then to the minimum), along a cosine or a
// line. With cycle_momentum, the momentum (SGD's and RMSprop's momentum,
// Adam's and AdamW's beta1) moves the other way, between max_momentum and
// base_momentum. Step it once per batch; the constructor sets the step-0
// rate (and momentum), as Python's does, and stepping more than
// total_steps times is an error.
//
//   tandem::optim::OneCycleLR scheduler(
//       optimizer, tandem::optim::OneCycleLROptions(0.1).total_steps(1000));
//   for (auto& batch : loader) { train(batch); scheduler.step(); }
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/optim/schedulers/lr_scheduler.h"

namespace tandem::optim {

class OneCycleLROptions {
 public:
  enum class AnnealStrategy { kCos, kLinear };

  /// The peak rate, for every group or one per group.
  OneCycleLROptions(double max_lr);               // implicit, as a LibTorch option
  OneCycleLROptions(std::vector<double> max_lr);  // implicit

  const std::vector<double>& max_lr() const { return max_lr_; }
  /// The number of steps of the cycle; else epochs * steps_per_epoch.
  std::optional<int64_t> total_steps() const { return total_steps_; }
  OneCycleLROptions& total_steps(int64_t total_steps) {
    total_steps_ = total_steps;
    return *this;
  }
  std::optional<int64_t> epochs() const { return epochs_; }
  OneCycleLROptions& epochs(int64_t epochs) {
    epochs_ = epochs;
    return *this;
  }
  std::optional<int64_t> steps_per_epoch() const { return steps_per_epoch_; }
  OneCycleLROptions& steps_per_epoch(int64_t steps_per_epoch) {
    steps_per_epoch_ = steps_per_epoch;
    return *this;
  }
  double pct_start() const { return pct_start_; }
  OneCycleLROptions& pct_start(double pct_start) {
    pct_start_ = pct_start;
    return *this;
  }
  AnnealStrategy anneal_strategy() const { return anneal_strategy_; }
  OneCycleLROptions& anneal_strategy(AnnealStrategy anneal_strategy) {
    anneal_strategy_ = anneal_strategy;
    return *this;
  }
  bool cycle_momentum() const { return cycle_momentum_; }
  OneCycleLROptions& cycle_momentum(bool cycle_momentum) {
    cycle_momentum_ = cycle_momentum;
    return *this;
  }
  double base_momentum() const { return base_momentum_; }
  OneCycleLROptions& base_momentum(double base_momentum) {
    base_momentum_ = base_momentum;
    return *this;
  }
  double max_momentum() const { return max_momentum_; }
  OneCycleLROptions& max_momentum(double max_momentum) {
    max_momentum_ = max_momentum;
    return *this;
  }
  double div_factor() const { return div_factor_; }
  OneCycleLROptions& div_factor(double div_factor) {
    div_factor_ = div_factor;
    return *this;
  }
  double final_div_factor() const { return final_div_factor_; }
  OneCycleLROptions& final_div_factor(double final_div_factor) {
    final_div_factor_ = final_div_factor;
    return *this;
  }
  bool three_phase() const { return three_phase_; }
  OneCycleLROptions& three_phase(bool three_phase) {
    three_phase_ = three_phase;
    return *this;
  }

 private:
  std::vector<double> max_lr_;
  std::optional<int64_t> total_steps_;
  std::optional<int64_t> epochs_;
  std::optional<int64_t> steps_per_epoch_;
  double pct_start_ = 0.3;
  AnnealStrategy anneal_strategy_ = AnnealStrategy::kCos;
  bool cycle_momentum_ = true;
  double base_momentum_ = 0.85;
  double max_momentum_ = 0.95;
  double div_factor_ = 25;
  double final_div_factor_ = 1e4;
  bool three_phase_ = false;
};

class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

  int64_t total_steps() const { return total_steps_; }

 protected:
  std::vector<double> get_lrs() override;

 private:
  // A phase runs to end_step, annealing between two of the group's points.
  enum class Point { kInitial, kMax, kMin };
  struct Phase {
    double end_step;
    Point start_lr, end_lr;
    bool momentum_starts_high, momentum_ends_high;
  };

  /// The rates at step `step_num` (Python's last_epoch), setting the
  /// momenta on the way when they cycle.
  std::vector<double> lrs_at(int64_t step_num);
  double anneal(double start, double end, double pct) const;
  double lr_of(size_t group, Point point) const;
  void set_momentum(size_t group, double momentum);

  OneCycleLROptions options_;
  int64_t total_steps_;
  std::vector<Phase> phases_;
  std::vector<double> max_lrs_;
};

}  // namespace tandem::optim
