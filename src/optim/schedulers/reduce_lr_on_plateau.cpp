#include "tandem/optim/schedulers/reduce_lr_on_plateau.h"

#include <algorithm>
#include <cmath>

#include "tandem/ops/factory.h"

namespace tandem::optim {
namespace {

ReduceLROnPlateauOptions libtorch_options(ReduceLROnPlateauScheduler::SchedulerMode mode,
                                          double factor,
                                          int64_t patience,
                                          double threshold,
                                          ReduceLROnPlateauScheduler::ThresholdMode tmode,
                                          int64_t cooldown,
                                          const std::vector<double>& min_lr,
                                          double eps) {
  using Options = ReduceLROnPlateauOptions;
  Options o;
  o.mode(mode == ReduceLROnPlateauScheduler::min ? Options::Mode::kMin
                                                 : Options::Mode::kMax)
      .factor(factor)
      .patience(patience)
      .threshold(threshold)
      .threshold_mode(tmode == ReduceLROnPlateauScheduler::rel
                          ? Options::ThresholdMode::kRel
                          : Options::ThresholdMode::kAbs)
      .cooldown(cooldown)
      .eps(eps);
  if (!min_lr.empty()) o.min_lr(min_lr);
  return o;
}

}  // namespace

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(Optimizer& optimizer,
                                                       ReduceLROnPlateauOptions options)
    : optimizer_(optimizer), options_(std::move(options)) {
  const size_t groups = optimizer.param_groups().size();
  TANDEM_CHECK(options_.factor() < 1.0,
               "ReduceLROnPlateau: factor should be < 1.0, got ",
               options_.factor());
  TANDEM_CHECK(options_.patience() >= 0,
               "ReduceLROnPlateau: patience must be >= 0, got ",
               options_.patience());
  TANDEM_CHECK(options_.cooldown() >= 0,
               "ReduceLROnPlateau: cooldown must be >= 0, got ",
               options_.cooldown());
  const auto& min_lr = options_.min_lr();
  TANDEM_CHECK(min_lr.size() == 1 || min_lr.size() == groups,
               "ReduceLROnPlateau: expected ",
               groups,
               " min_lrs (one per parameter group), got ",
               min_lr.size());
  min_lrs_ = min_lr.size() == 1 ? std::vector<double>(groups, min_lr[0]) : min_lr;
  best_ = options_.mode() == ReduceLROnPlateauOptions::Mode::kMin
              ? std::numeric_limits<double>::infinity()
              : -std::numeric_limits<double>::infinity();
}

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(Optimizer& optimizer,
                                                       SchedulerMode mode,
                                                       double factor,
                                                       int64_t patience,
                                                       double threshold,
                                                       ThresholdMode threshold_mode,
                                                       int64_t cooldown,
                                                       const std::vector<double>& min_lr,
                                                       double eps)
    : ReduceLROnPlateauScheduler(
          optimizer,
          libtorch_options(
              mode, factor, patience, threshold, threshold_mode, cooldown, min_lr, eps)) {
}

bool ReduceLROnPlateauScheduler::is_better(double value) const {
  using Options = ReduceLROnPlateauOptions;
  const double t = options_.threshold();
  const bool rel = options_.threshold_mode() == Options::ThresholdMode::kRel;
  if (options_.mode() == Options::Mode::kMin) {
    return rel ? value < best_ * (1. - t) : value < best_ - t;
  }
  return rel ? value > best_ * (t + 1.) : value > best_ + t;
}

void ReduceLROnPlateauScheduler::step(double metric) {
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {
    --cooldown_counter_;
    num_bad_epochs_ = 0;  // bad steps in the cooldown do not count
  }
  if (num_bad_epochs_ > options_.patience()) {
    auto& groups = optimizer_.param_groups();
    for (size_t g = 0; g < groups.size(); ++g) {
      const double old_lr = groups[g].options().get_lr();
      const double new_lr = std::max(old_lr * options_.factor(), min_lrs_[g]);
      if (old_lr - new_lr > options_.eps()) groups[g].options().set_lr(new_lr);
    }
    cooldown_counter_ = options_.cooldown();
    num_bad_epochs_ = 0;
  }
}

std::vector<double> ReduceLROnPlateauScheduler::get_last_lr() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups())
    lrs.push_back(group.options().get_lr());
  return lrs;
}

StateDict ReduceLROnPlateauScheduler::state_dict() const {
  auto int64_scalar = [](int64_t v) { return tensor(std::vector<int64_t>{v}).view({}); };
  return {{"best", scalar_tensor(best_, kFloat64)},
          {"num_bad_epochs", int64_scalar(num_bad_epochs_)},
          {"cooldown_counter", int64_scalar(cooldown_counter_)},
          {"last_epoch", int64_scalar(last_epoch_)}};
}

void ReduceLROnPlateauScheduler::load_state_dict(const StateDict& state_dict) {
  auto get = [&](const char* key) -> const Tensor& {
    auto it = state_dict.find(key);
    TANDEM_CHECK(
        it != state_dict.end(), "ReduceLROnPlateau::load_state_dict: missing key ", key);
    TANDEM_CHECK(it->second.defined() && it->second.numel() == 1,
                 "ReduceLROnPlateau::load_state_dict: ",
                 key,
                 " must hold one number");
    return it->second;
  };
  const double best = get("best").item<double>();
  const int64_t bad = get("num_bad_epochs").item<int64_t>();
  const int64_t cooldown = get("cooldown_counter").item<int64_t>();
  const int64_t last = get("last_epoch").item<int64_t>();
  TANDEM_CHECK(state_dict.size() == 4,
               "ReduceLROnPlateau::load_state_dict: expected the keys best, ",
               "num_bad_epochs, cooldown_counter and last_epoch only, got ",
               state_dict.size(),
               " keys");
  best_ = best;
  num_bad_epochs_ = bad;
  cooldown_counter_ = cooldown;
  last_epoch_ = last;
}

}  // namespace tandem::optim
