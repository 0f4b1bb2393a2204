#include "tandem/parallel/share_balancer.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "tandem/core/error.h"
#include "tandem/parallel/shares.h"

namespace tandem::parallel {

ShareBalancer::ShareBalancer(std::vector<double> weights)
    : weights_(std::move(weights)), rates_(weights_.size(), 0.0) {
  check_shares(weights_, weights_.size(), "ShareBalancer");
}

std::vector<int64_t> ShareBalancer::cut(int64_t rows) const {
  return cut_by_shares(rows, weights_);
}

std::vector<double> ShareBalancer::shares() const { return normalized(weights_); }

double ShareBalancer::rate_model_seconds(const std::vector<int64_t>& cut) const {
  double longest = 0;
  for (size_t i = 0; i < cut.size(); ++i) {
    if (cut[i] > 0) longest = std::max(longest, static_cast<double>(cut[i]) / rates_[i]);
  }
  return longest;
}

bool ShareBalancer::follow_rates(int64_t total) {
  // A device with a share but no rate yet cannot be planned for.
  for (size_t i = 0; i < weights_.size(); ++i) {
    if (weights_[i] > 0 && rates_[i] == 0) return false;
  }
  const std::vector<int64_t> now = cut_by_shares(total, weights_);
  const std::vector<int64_t> proposed = cut_by_shares(total, rates_);
  if (rate_model_seconds(proposed) >= (1 - kHysteresis) * rate_model_seconds(now)) {
    return false;
  }
  weights_ = rates_;
  return true;
}

bool ShareBalancer::observe(const std::vector<int64_t>& rows,
                            const std::vector<double>& work_seconds,
                            double step_seconds) {
  TANDEM_CHECK(rows.size() == weights_.size() && work_seconds.size() == weights_.size(),
               "ShareBalancer: observed ",
               rows.size(),
               " row counts and ",
               work_seconds.size(),
               " times for ",
               weights_.size(),
               " devices");
  if (steps_seen_++ == 0) return false;  // the first step clones and allocates
  for (size_t i = 0; i < rows.size(); ++i) {
    if (rows[i] <= 0 || work_seconds[i] <= 0) continue;
    const double rate = static_cast<double>(rows[i]) / work_seconds[i];
    rates_[i] = rates_[i] == 0 ? rate : (1 - kSmoothing) * rates_[i] + kSmoothing * rate;
  }
  const int64_t total = std::accumulate(rows.begin(), rows.end(), int64_t{0});
  if (total == 0) return false;
  const std::vector<int64_t> before = cut_by_shares(total, weights_);
  if (search_) {
    if (search_->observe(step_seconds / static_cast<double>(total))) {
      weights_ = search_->shares();
    }
    if (search_->drifted()) {
      search_.reset();
      steps_unmoved_ = 0;
    }
  } else if (follow_rates(total)) {
    steps_unmoved_ = 0;
  } else if (++steps_unmoved_ >= kSettledSteps) {
    search_.emplace(weights_);
    weights_ = search_->shares();
  }
  return cut_by_shares(total, weights_) != before;
}

}  // namespace tandem::parallel
