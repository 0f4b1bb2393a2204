// The schedules that are a line or two of arithmetic: LambdaLR,
// MultiStepLR, ExponentialLR and CosineAnnealingLR, each following Python's
// get_lr() in 1.13 (for the step that makes Python's last_epoch
// step_count() + 1).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "tandem/optim/schedulers/cosine_annealing_lr.h"
#include "tandem/optim/schedulers/exponential_lr.h"
#include "tandem/optim/schedulers/lambda_lr.h"
#include "tandem/optim/schedulers/multi_step_lr.h"

namespace tandem::optim {

// ---- LambdaLR ----

LambdaLR::LambdaLR(Optimizer& optimizer, LrLambda lr_lambda)
    : LambdaLR(optimizer,
               std::vector<LrLambda>(optimizer.param_groups().size(), lr_lambda)) {}

LambdaLR::LambdaLR(Optimizer& optimizer, std::vector<LrLambda> lr_lambdas)
    : LRScheduler(optimizer), lr_lambdas_(std::move(lr_lambdas)) {
  TANDEM_CHECK(lr_lambdas_.size() == optimizer.param_groups().size(),
               "LambdaLR: expected ",
               optimizer.param_groups().size(),
               " lr_lambdas (one per parameter group), got ",
               lr_lambdas_.size());
  for (size_t g = 0; g < lr_lambdas_.size(); ++g) {
    TANDEM_CHECK(lr_lambdas_[g] != nullptr, "LambdaLR: lr_lambda ", g, " is empty");
  }
  set_lrs(lrs_at(0));
}

std::vector<double> LambdaLR::lrs_at(int64_t epoch) const {
  std::vector<double> lrs = base_lrs();
  for (size_t g = 0; g < lrs.size(); ++g) lrs[g] *= lr_lambdas_[g](epoch);
  return lrs;
}

std::vector<double> LambdaLR::get_lrs() { return lrs_at(step_count() + 1); }

// ---- MultiStepLR ----

MultiStepLR::MultiStepLR(Optimizer& optimizer,
                         std::vector<int64_t> milestones,
                         double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {}

std::vector<double> MultiStepLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  const auto hits = std::count(milestones_.begin(), milestones_.end(), step_count() + 1);
  if (hits == 0) return lrs;
  const double factor = std::pow(gamma_, static_cast<double>(hits));
  for (double& lr : lrs) lr *= factor;
  return lrs;
}

// ---- ExponentialLR ----

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma)
    : LRScheduler(optimizer), gamma_(gamma) {}

std::vector<double> ExponentialLR::get_lrs() {
  std::vector<double> lrs = get_current_lrs();
  for (double& lr : lrs) lr *= gamma_;
  return lrs;
}

// ---- CosineAnnealingLR ----

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  TANDEM_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be positive, got ", T_max);
}

std::vector<double> CosineAnnealingLR::get_lrs() {
  constexpr double kPi = std::numbers::pi;
  const int64_t epoch = step_count() + 1;
  const auto T_max = static_cast<double>(T_max_);
  std::vector<double> lrs = get_current_lrs();
  const int64_t period = 2 * T_max_;
  // Python's % is never negative.
  const int64_t phase = (((epoch - 1 - T_max_) % period) + period) % period;
  for (size_t g = 0; g < lrs.size(); ++g) {
    if (phase == 0) {
      // The bottom of the cosine, where the recursive ratio would be 0/0.
      lrs[g] += (base_lrs()[g] - eta_min_) * (1 - std::cos(kPi / T_max)) / 2;
    } else {
      lrs[g] = (1 + std::cos(kPi * static_cast<double>(epoch) / T_max)) /
                   (1 + std::cos(kPi * static_cast<double>(epoch - 1) / T_max)) *
                   (lrs[g] - eta_min_) +
               eta_min_;
    }
  }
  return lrs;
}

}  // namespace tandem::optim
