// CutSearch: the second half of Balance::kAuto (share_balancer.h). It moves
// the cut of each batch by the measured wall time of whole steps, starting
// from the rate model's guess, and holds it once the step time stops
// improving. See Note [Searching the cut by the step's time] in the .cpp.
//
// It is told the seconds per row of every step at shares(), and nothing
// else: no clock, so the same numbers give the same cuts (DDP's ranks
// each run one and agree bitwise).
//
//   parallel::CutSearch search({0.64, 0.36});   // the rate model's guess
//   for (...) {
//     ... run a step cut by search.shares() ...
//     search.observe(step_seconds / rows);
//   }
//   search.converged();   // true once the cut holds; drifted() when the
//                         // step time later leaves its converged value
#pragma once

#include <vector>

namespace tandem::parallel {

class CutSearch {
 public:
  /// The steps a probe of one cut lasts; it is judged by their median.
  static constexpr int kStepsPerProbe = 4;
  /// The first move, as the part of the batch that changes devices.
  static constexpr double kFirstMove = 1.0 / 16;
  /// Moves are halved down to this; below it the search has converged.
  static constexpr double kFinestMove = 1.0 / 64;
  /// A probe must be faster than the held cut by this much to win.
  static constexpr double kGain = 0.02;
  /// A converged step time that changes by this much re-opens the search.
  static constexpr double kDrift = 0.2;

  /// Starts at `guess` (fractions of the batch, one per device).
  explicit CutSearch(const std::vector<double>& guess);

  /// Records one step at shares() that took `seconds_per_row` (the step's
  /// wall time over its rows). Returns whether shares() changed.
  bool observe(double seconds_per_row);

  /// The shares of the next step, fractions that sum to 1.
  std::vector<double> shares() const { return shares_at(measuring_); }
  /// Whether the cut holds: no move left that the step time rewards.
  bool converged() const noexcept { return phase_ == Phase::kConverged; }
  /// Whether the step time, after converging, changed by more than kDrift:
  /// the cut should be searched again.
  bool drifted() const noexcept { return drifted_; }

 private:
  enum class Phase { kTimingHeld, kProbing, kConverged };

  // Equal shares plus `position` times direction_.
  std::vector<double> shares_at(double position) const;
  // Starts the next probe of move_, or converges when no move is left.
  void next_probe();
  // Neither side won: halves the move, or converges below kFinestMove.
  void halve_move();
  // Holds the best cut for good.
  void converge();

  std::vector<double> equal_;
  // From the equal cut toward the guess; its positive parts sum to 1, so a
  // position is the part of the batch moved away from the equal cut.
  std::vector<double> direction_;
  // The positions that keep every device in the step.
  double lowest_ = 0, highest_ = 0;
  double held_ = 0;       // the position of the best cut found
  double measuring_ = 0;  // the position the steps run at
  // The seconds per row of the steps at held_ (since it won), and their
  // median.
  std::vector<double> held_samples_;
  double held_seconds_ = 0;
  double move_ = kFirstMove;
  double sign_ = 1;  // the side of the next probe
  bool other_side_tried_ = false;
  bool drifted_ = false;
  Phase phase_ = Phase::kTimingHeld;
  std::vector<double> window_;  // the steps of the probe under way
};

}  // namespace tandem::parallel
