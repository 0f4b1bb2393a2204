// ShareBalancer: shares that follow the devices' speed (Balance::kAuto).
//
// Each step, the balancer is told how many rows each device did, how long
// its part of the step took (device_work_time.h: its forward and its
// backward, not its waits), and the wall time of the whole step. First a
// rate model makes the guess: it keeps a smoothed rate per device (rows per
// second, an exponential average over steps) and moves the shares to those
// rates when the cut they give would end the step sooner by more than a
// margin (hysteresis), so that the noise of a shared machine does not move
// the cut every step; it ignores its first step (clones, first
// allocations). Once that guess has held for kSettledSteps steps, a search
// on the step's wall time takes the cut over (cut_search.h: devices that
// share cores are not as fast alone as together, which rates cannot see),
// until the step time drifts, when the rate model guesses again. The cut
// changes only between steps, when the caller asks.
//
//   parallel::ShareBalancer balancer({1.0, 1.0});
//   auto cut = balancer.cut(256);                 // {128, 128}
//   ... run the step ...
//   balancer.observe(cut, {0.010, 0.020}, 0.021); // cpu:1 took twice as long
//   // after a few steps: balancer.cut(256) is about {171, 85}, and then
//   // what the step time rewards
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/parallel/cut_search.h"

namespace tandem::parallel {

class ShareBalancer {
 public:
  /// The margin a new cut must gain: 10% of the step. The search refines
  /// the rest, so the rate model moves on clear differences only.
  static constexpr double kHysteresis = 0.1;
  /// The weight of the newest step in the smoothed rates.
  static constexpr double kSmoothing = 0.3;
  /// The steps the rate model's shares must hold before the search starts.
  static constexpr int64_t kSettledSteps = 3;

  /// Starts from `weights` (checked as check_shares does).
  explicit ShareBalancer(std::vector<double> weights);

  /// The cut of `rows` under the current shares.
  std::vector<int64_t> cut(int64_t rows) const;

  /// Records one step: rows[i] done by device i in work_seconds[i] of its
  /// own work, the whole step in step_seconds of wall time (0: not known).
  /// A device with no rows or no time keeps its rate. Returns whether the
  /// cut of a batch of this step's rows changed.
  bool observe(const std::vector<int64_t>& rows,
               const std::vector<double>& work_seconds,
               double step_seconds);

  /// The current shares, as fractions that sum to 1.
  std::vector<double> shares() const;
  /// The smoothed rates in rows per second (0 where not yet measured).
  const std::vector<double>& rates() const noexcept { return rates_; }
  /// The search on the step time, once the rate model has settled.
  const std::optional<CutSearch>& search() const noexcept { return search_; }

 private:
  // The longest of the devices' times for `cut` at the smoothed rates.
  double rate_model_seconds(const std::vector<int64_t>& cut) const;
  // The rate model's move for a step of `total` rows: whether it moved.
  bool follow_rates(int64_t total);

  std::vector<double> weights_;
  std::vector<double> rates_;
  int64_t steps_seen_ = 0;
  int64_t steps_unmoved_ = 0;  // by the rate model, in a row
  std::optional<CutSearch> search_;
};

}  // namespace tandem::parallel
