// ReduceLROnPlateau: multiplies every group's learning rate by factor when
// a metric (a validation loss, say) has stopped improving for patience
// steps, as Python's torch.optim.lr_scheduler.ReduceLROnPlateau and
// LibTorch's ReduceLROnPlateauScheduler. Unlike the other schedules, its
// step takes the metric.
//
//   tandem::optim::ReduceLROnPlateau scheduler(
//       optimizer, tandem::optim::ReduceLROnPlateauOptions().patience(2).factor(0.5));
//   for (int epoch = 0; epoch < 100; ++epoch) {
//     train_one_epoch();
//     scheduler.step(validation_loss());
//   }
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

class ReduceLROnPlateauOptions {
 public:
  /// min: the metric should fall (a loss); max: it should rise (accuracy).
  enum class Mode { kMin, kMax };
  /// rel: better means beyond best * (1 -/+ threshold); abs: beyond
  /// best -/+ threshold.
  enum class ThresholdMode { kRel, kAbs };

  Mode mode() const { return mode_; }
  ReduceLROnPlateauOptions& mode(Mode mode) {
    mode_ = mode;
    return *this;
  }
  double factor() const { return factor_; }
  ReduceLROnPlateauOptions& factor(double factor) {
    factor_ = factor;
    return *this;
  }
  /// Steps without improvement tolerated before the rate falls.
  int64_t patience() const { return patience_; }
  ReduceLROnPlateauOptions& patience(int64_t patience) {
    patience_ = patience;
    return *this;
  }
  double threshold() const { return threshold_; }
  ReduceLROnPlateauOptions& threshold(double threshold) {
    threshold_ = threshold;
    return *this;
  }
  ThresholdMode threshold_mode() const { return threshold_mode_; }
  ReduceLROnPlateauOptions& threshold_mode(ThresholdMode threshold_mode) {
    threshold_mode_ = threshold_mode;
    return *this;
  }
  /// Steps after a reduction during which bad steps are not counted.
  int64_t cooldown() const { return cooldown_; }
  ReduceLROnPlateauOptions& cooldown(int64_t cooldown) {
    cooldown_ = cooldown;
    return *this;
  }
  /// The lowest rate, for every group (one value) or one per group.
  const std::vector<double>& min_lr() const { return min_lr_; }
  ReduceLROnPlateauOptions& min_lr(double min_lr) {
    min_lr_ = {min_lr};
    return *this;
  }
  ReduceLROnPlateauOptions& min_lr(std::vector<double> min_lr) {
    min_lr_ = std::move(min_lr);
    return *this;
  }
  /// A reduction smaller than eps is not made.
  double eps() const { return eps_; }
  ReduceLROnPlateauOptions& eps(double eps) {
    eps_ = eps;
    return *this;
  }

 private:
  Mode mode_ = Mode::kMin;
  double factor_ = 0.1;
  int64_t patience_ = 10;
  double threshold_ = 1e-4;
  ThresholdMode threshold_mode_ = ThresholdMode::kRel;
  int64_t cooldown_ = 0;
  std::vector<double> min_lr_{0.0};
  double eps_ = 1e-8;
};

class ReduceLROnPlateauScheduler {
 public:
  /// LibTorch's spellings of the modes.
  enum SchedulerMode { min, max };
  enum ThresholdMode { rel, abs };

  explicit ReduceLROnPlateauScheduler(Optimizer& optimizer,
                                      ReduceLROnPlateauOptions options = {});
  /// LibTorch's constructor; an empty min_lr means 0 for every group.
  ReduceLROnPlateauScheduler(Optimizer& optimizer,
                             SchedulerMode mode,
                             double factor = 0.1,
                             int64_t patience = 10,
                             double threshold = 1e-4,
                             ThresholdMode threshold_mode = rel,
                             int64_t cooldown = 0,
                             const std::vector<double>& min_lr = {},
                             double eps = 1e-8);

  /// Records the metric of one step and lowers the rates after patience
  /// steps without improvement.
  void step(double metric);

  double best() const { return best_; }
  int64_t num_bad_epochs() const { return num_bad_epochs_; }
  int64_t cooldown_counter() const { return cooldown_counter_; }
  int64_t last_epoch() const { return last_epoch_; }
  std::vector<double> get_last_lr() const;

  /// best, num_bad_epochs, cooldown_counter and last_epoch, for checkpoints.
  StateDict state_dict() const;
  void load_state_dict(const StateDict& state_dict);

 private:
  bool is_better(double value) const;

  Optimizer& optimizer_;
  ReduceLROnPlateauOptions options_;
  std::vector<double> min_lrs_;
  double best_;
  int64_t num_bad_epochs_ = 0;
  int64_t cooldown_counter_ = 0;
  int64_t last_epoch_ = 0;
};

using ReduceLROnPlateau = ReduceLROnPlateauScheduler;

}  // namespace tandem::optim
