#include "tandem/parallel/cut_plan.h"

#include <utility>

#include "tandem/core/device_work_time.h"

namespace tandem::parallel {

CutPlan::CutPlan(std::vector<Device> devices,
                 Balance balance,
                 std::optional<std::vector<double>> shares)
    : devices_(std::move(devices)), rows_since_(devices_.size(), 0) {
  if (shares) check_shares(*shares, devices_.size(), "DataParallelOptions::shares");
  if (balance == Balance::kAuto) {
    balancer_.emplace(shares.value_or(std::vector<double>(devices_.size(), 1.0)));
  } else {
    fixed_ = std::move(shares);
  }
}

std::vector<int64_t> CutPlan::next(int64_t rows) {
  if (!balancer_)
    return fixed_ ? cut_by_shares(rows, *fixed_) : even_cut(rows, devices_.size());
  std::vector<double> work;
  for (const Device& d : devices_) work.push_back(device_work_seconds(d));
  const auto now = std::chrono::steady_clock::now();
  if (!work_seen_.empty()) {
    std::vector<double> spent(work.size());
    for (size_t i = 0; i < work.size(); ++i) spent[i] = work[i] - work_seen_[i];
    balancer_->observe(
        rows_since_, spent, std::chrono::duration<double>(now - last_call_).count());
    std::fill(rows_since_.begin(), rows_since_.end(), 0);
  }
  work_seen_ = std::move(work);
  last_call_ = now;
  std::vector<int64_t> cut = balancer_->cut(rows);
  for (size_t i = 0; i < cut.size(); ++i) rows_since_[i] += cut[i];
  return cut;
}

std::vector<double> CutPlan::shares() const {
  if (balancer_) return balancer_->shares();
  if (fixed_) return normalized(*fixed_);
  return std::vector<double>(devices_.size(), 1.0 / static_cast<double>(devices_.size()));
}

}  // namespace tandem::parallel
