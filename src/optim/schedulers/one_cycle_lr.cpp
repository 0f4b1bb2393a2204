#include "tandem/optim/schedulers/one_cycle_lr.h"

#include <cmath>
#include <numbers>

#include "tandem/optim/adam.h"
#include "tandem/optim/adamw.h"
#include "tandem/optim/rmsprop.h"
#include "tandem/optim/sgd.h"

namespace tandem::optim {
namespace {

// Sets the option that plays momentum's part: SGD's and RMSprop's momentum,
// Adam's and AdamW's beta1 (Python: "momentum" or "betas" among the
// optimizer's defaults). Returns false for options without one.
bool set_momentum_option(OptimizerOptions& options, double momentum) {
  if (auto* sgd = dynamic_cast<SGDOptions*>(&options)) {
    sgd->momentum(momentum);
    return true;
  }
  if (auto* rmsprop = dynamic_cast<RMSpropOptions*>(&options)) {
    rmsprop->momentum(momentum);
    return true;
  }
  if (auto* adam = dynamic_cast<AdamOptions*>(&options)) {
    adam->betas({momentum, std::get<1>(adam->betas())});
    return true;
  }
  if (auto* adamw = dynamic_cast<AdamWOptions*>(&options)) {
    adamw->betas({momentum, std::get<1>(adamw->betas())});
    return true;
  }
  return false;
}

int64_t total_steps_of(const OneCycleLROptions& o) {
  if (o.total_steps()) {
    TANDEM_CHECK(*o.total_steps() > 0,
                 "OneCycleLR: expected a positive total_steps, got ",
                 *o.total_steps());
    return *o.total_steps();
  }
  TANDEM_CHECK(o.epochs() && o.steps_per_epoch(),
               "OneCycleLR: set either total_steps or both epochs and steps_per_epoch");
  TANDEM_CHECK(
      *o.epochs() > 0, "OneCycleLR: expected a positive epochs, got ", *o.epochs());
  TANDEM_CHECK(*o.steps_per_epoch() > 0,
               "OneCycleLR: expected a positive steps_per_epoch, got ",
               *o.steps_per_epoch());
  return *o.epochs() * *o.steps_per_epoch();
}

}  // namespace

OneCycleLROptions::OneCycleLROptions(double max_lr) : max_lr_{max_lr} {}

OneCycleLROptions::OneCycleLROptions(std::vector<double> max_lr)
    : max_lr_(std::move(max_lr)) {}

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options)
    : LRScheduler(optimizer), options_(options), total_steps_(total_steps_of(options)) {
  const size_t groups = optimizer.param_groups().size();
  const double pct = options.pct_start();
  TANDEM_CHECK(pct >= 0 && pct <= 1,
               "OneCycleLR: expected a pct_start between 0 and 1, got ",
               pct);
  TANDEM_CHECK(options.max_lr().size() == 1 || options.max_lr().size() == groups,
               "OneCycleLR: expected ",
               groups,
               " values for max_lr (one per parameter group), got ",
               options.max_lr().size());
  max_lrs_ = options.max_lr().size() == 1
                 ? std::vector<double>(groups, options.max_lr()[0])
                 : options.max_lr();
  const auto total = static_cast<double>(total_steps_);
  if (options.three_phase()) {
    phases_ = {{pct * total - 1, Point::kInitial, Point::kMax, true, false},
               {2 * pct * total - 2, Point::kMax, Point::kInitial, false, true},
               {total - 1, Point::kInitial, Point::kMin, true, true}};
  } else {
    phases_ = {{pct * total - 1, Point::kInitial, Point::kMax, true, false},
               {total - 1, Point::kMax, Point::kMin, false, true}};
  }
  if (options.cycle_momentum()) {
    TANDEM_CHECK(
        set_momentum_option(*optimizer.defaults().clone(), options.max_momentum()),
        "OneCycleLR: the optimizer must support momentum (SGD, RMSprop, ",
        "Adam, AdamW) when cycle_momentum is on");
  }
  set_lrs(lrs_at(0));
}

double OneCycleLR::lr_of(size_t group, Point point) const {
  const double initial = max_lrs_[group] / options_.div_factor();
  switch (point) {
    case Point::kInitial:
      return initial;
    case Point::kMax:
      return max_lrs_[group];
    case Point::kMin:
      return initial / options_.final_div_factor();
  }
  return initial;
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == OneCycleLROptions::AnnealStrategy::kLinear) {
    return (end - start) * pct + start;
  }
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

void OneCycleLR::set_momentum(size_t group, double momentum) {
  set_momentum_option(optimizer().param_groups()[group].options(), momentum);
}

std::vector<double> OneCycleLR::lrs_at(int64_t step_num) {
  TANDEM_CHECK(step_num <= total_steps_,
               "OneCycleLR: tried to step ",
               step_num + 1,
               " times; the specified number of total steps is ",
               total_steps_);
  const size_t groups = optimizer().param_groups().size();
  std::vector<double> lrs(groups);
  const auto step = static_cast<double>(step_num);
  for (size_t g = 0; g < groups; ++g) {
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (step <= phase.end_step || i + 1 == phases_.size()) {
        const double pct = (step - start_step) / (phase.end_step - start_step);
        lrs[g] = anneal(lr_of(g, phase.start_lr), lr_of(g, phase.end_lr), pct);
        if (options_.cycle_momentum()) {
          const double high = options_.max_momentum(), low = options_.base_momentum();
          set_momentum(g,
                       anneal(phase.momentum_starts_high ? high : low,
                              phase.momentum_ends_high ? high : low,
                              pct));
        }
        break;
      }
      start_step = phase.end_step;
    }
  }
  return lrs;
}

std::vector<double> OneCycleLR::get_lrs() { return lrs_at(step_count() + 1); }

}  // namespace tandem::optim
