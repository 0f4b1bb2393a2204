// CutPlan: how nn::DataParallel cuts each batch over its devices (shares.h):
// by the chunk rule (Balance::kEven, PyTorch's), by fixed shares, or by
// shares that follow the devices' speed (Balance::kAuto). For kAuto, each
// call first tells a ShareBalancer what every device did since the last
// call (the rows it got, and its work time from device_work_time.h, which
// covers its forward and its backward) and the wall time since the last
// call (the step, boundary to boundary), so the cut moves at step
// boundaries only.
//
//   parallel::CutPlan plan({"cpu:0", "cpu:1"}, parallel::Balance::kAuto);
//   auto cut = plan.next(256);     // {128, 128}, then what the speeds say
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/parallel/share_balancer.h"
#include "tandem/parallel/shares.h"

namespace tandem::parallel {

class CutPlan {
 public:
  /// `shares` (checked, one per device) are fixed under kEven and the
  /// starting point under kAuto (default: equal).
  CutPlan(std::vector<Device> devices,
          Balance balance,
          std::optional<std::vector<double>> shares = std::nullopt);

  /// The cut of this step's `rows`, one count per device (zero for a device
  /// that sits the step out).
  std::vector<int64_t> next(int64_t rows);

  /// The current shares, as fractions that sum to 1 (kEven without shares:
  /// equal).
  std::vector<double> shares() const;
  /// Whether the cut is the chunk rule's.
  bool even() const noexcept { return !fixed_ && !balancer_; }
  Balance balance() const noexcept { return balancer_ ? Balance::kAuto : Balance::kEven; }

 private:
  std::vector<Device> devices_;
  std::optional<std::vector<double>> fixed_;
  std::optional<ShareBalancer> balancer_;
  // kAuto: the devices' work times at the last call, when it was, and the
  // rows each got since then.
  std::vector<double> work_seen_;
  std::chrono::steady_clock::time_point last_call_;
  std::vector<int64_t> rows_since_;
};

}  // namespace tandem::parallel
