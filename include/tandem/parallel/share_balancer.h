// ShareBalancer: shares that follow the devices' speed (Balance::kAuto).
//
// Each step, the balancer is told how many rows each device did and how
// long its part of the step took (device_work_time.h: its forward and its
// backward, not its waits), and keeps a smoothed rate per device (rows per
// second, an exponential average over steps). It moves the shares to those
// rates only when the cut they give would end the step sooner by more than
// a margin (hysteresis), so that the noise of a shared machine does not
// move the cut every step; and it ignores its first step (clones, first
// allocations). The cut changes only between steps, when the caller asks.
//
//   parallel::ShareBalancer balancer({1.0, 1.0});
//   auto cut = balancer.cut(256);          // {128, 128}
//   ... run the step ...
//   balancer.observe(cut, {0.010, 0.020}); // cpu:1 took twice as long
//   // after a few steps: balancer.cut(256) is about {171, 85}
#pragma once

#include <cstdint>
#include <vector>

namespace tandem::parallel {

class ShareBalancer {
 public:
  /// The margin a new cut must gain: 5% of the step.
  static constexpr double kHysteresis = 0.05;
  /// The weight of the newest step in the smoothed rates.
  static constexpr double kSmoothing = 0.3;

  /// Starts from `weights` (checked as check_shares does).
  explicit ShareBalancer(std::vector<double> weights);

  /// The cut of `rows` under the current shares.
  std::vector<int64_t> cut(int64_t rows) const;

  /// Records one step: rows[i] done by device i in seconds[i]. A device
  /// with no rows or no time keeps its rate. Returns whether the shares
  /// changed.
  bool observe(const std::vector<int64_t>& rows, const std::vector<double>& seconds);

  /// The current shares, as fractions that sum to 1.
  std::vector<double> shares() const;
  /// The smoothed rates in rows per second (0 where not yet measured).
  const std::vector<double>& rates() const noexcept { return rates_; }

 private:
  // The longest of the devices' times for `cut` at the smoothed rates.
  double step_seconds(const std::vector<int64_t>& cut) const;

  std::vector<double> weights_;
  std::vector<double> rates_;
  int64_t steps_seen_ = 0;
};

}  // namespace tandem::parallel
