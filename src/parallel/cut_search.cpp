// Note [Searching the cut by the step's time]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The rate model (ShareBalancer) times each device's own work and cuts the
// batch so that the work times come out equal. That is right while a
// device's speed is its own. On logical CPU devices it is not: they share
// the core budget's tokens (cpu_budget.h), so when a slow device finishes
// its part, a fast device's operations take the freed token for a helper
// thread and run about twice as fast. The fast device's speed grows with its
// rows, and the cut that equalizes the work times (0.62-0.66 of the batch on
// cpu:0 in bench/balance, cpu:1 at half a core) ends the step later than the
// cut that makes the step shortest (about 0.75). No rate per device can
// describe that; the step's own wall time does.
//
// So once the rate model has settled (ShareBalancer::kSettledSteps steps
// without a move), this search takes the cut over. It moves along one line:
// the equal cut plus a position times the direction from the equal cut to
// the rate model's guess (for two devices every cut lies on it; for more,
// the position scales how far the guess departs from equal). A probe runs
// kStepsPerProbe steps at one cut and takes their median seconds per row
// (a spike of the machine counts once, a batch of another size by its
// rows). First the held cut, the guess, is timed; then the cut one move
// further out. A probe at least kGain faster becomes the held cut and the
// search goes on the same way; otherwise it tries the other side once (not
// after a win: that side is the cut just left). When neither side wins,
// the move is halved and the held cut is timed again, its steps pooled
// with the earlier ones: a lucky first time that no probe could beat would
// otherwise stop the search where it began. Below kFinestMove it has
// converged, and the cut holds. The equal cut is a stop on the line (a move
// across it ends on it), so the search can come back to exactly even.
//
// Noise is kept out three ways: a probe is a median of several steps, it
// must win by kGain, and a converged search stops probing. With +-10% on
// every time, in the ten seeded runs of cut_search_test.cpp, it still
// converges in about 45 steps and ends within 1/8 of the batch of the best
// cut, 1/32 on average. The held
// cut's time is still watched, in windows of kStepsPerProbe steps; a median
// more than kDrift away from the converged one (a neighbour came or left)
// marks the search drifted, and ShareBalancer hands the cut back to the
// rate model, whose new guess starts a new search.
//
// With equal devices the rate model stays at the equal cut (its hysteresis
// is wide now that the search refines its guess), the direction is empty,
// and the search holds the equal cut from the start: auto then costs
// nothing. Every device keeps at least kSmallestShare of its equal share,
// so none leaves the step (a device with no rows has no rate to watch, and
// a DDP rank with no rows no loss to take).
#include "tandem/parallel/cut_search.h"

#include <algorithm>
#include <cmath>

namespace tandem::parallel {
namespace {

// Below this a direction is no direction: the guess is the equal cut.
constexpr double kNoDirection = 1e-9;
// Every device keeps this part of its equal share at least.
constexpr double kSmallestShare = 1.0 / 16;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

CutSearch::CutSearch(const std::vector<double>& guess)
    : equal_(guess.size(), 1.0 / static_cast<double>(guess.size())),
      direction_(guess.size()) {
  double total = 0;
  for (double g : guess) total += g;
  double moved = 0;
  for (size_t i = 0; i < guess.size(); ++i) {
    direction_[i] = guess[i] / total - equal_[i];
    moved += std::max(direction_[i], 0.0);
  }
  if (moved < kNoDirection) {
    // Nothing to search: the held equal cut is timed, then watched.
    std::fill(direction_.begin(), direction_.end(), 0.0);
    move_ = 0;
    return;
  }
  for (double& d : direction_) d /= moved;
  lowest_ = -1;
  highest_ = 1;
  for (size_t i = 0; i < direction_.size(); ++i) {
    const double room = equal_[i] * (1 - kSmallestShare);
    if (direction_[i] < 0) highest_ = std::min(highest_, room / -direction_[i]);
    if (direction_[i] > 0) lowest_ = std::max(lowest_, -room / direction_[i]);
  }
  held_ = measuring_ = std::clamp(moved, lowest_, highest_);
}

std::vector<double> CutSearch::shares_at(double position) const {
  std::vector<double> shares(equal_.size());
  for (size_t i = 0; i < shares.size(); ++i)
    shares[i] = equal_[i] + position * direction_[i];
  return shares;
}

bool CutSearch::observe(double seconds_per_row) {
  if (!(seconds_per_row > 0)) return false;
  window_.push_back(seconds_per_row);
  if (static_cast<int>(window_.size()) < kStepsPerProbe) return false;
  const double before = measuring_;
  switch (phase_) {
    case Phase::kTimingHeld:
      held_samples_.insert(held_samples_.end(), window_.begin(), window_.end());
      held_seconds_ = median(held_samples_);
      next_probe();
      break;
    case Phase::kProbing:
      if (median(window_) < (1 - kGain) * held_seconds_) {
        held_ = measuring_;
        held_samples_ = window_;
        held_seconds_ = median(held_samples_);
        other_side_tried_ = true;  // the other side is the cut just left
        next_probe();
      } else if (!other_side_tried_) {
        sign_ = -sign_;
        other_side_tried_ = true;
        next_probe();
      } else {
        halve_move();
      }
      break;
    case Phase::kConverged:
      drifted_ = drifted_ || std::abs(median(window_) / held_seconds_ - 1) > kDrift;
      break;
  }
  window_.clear();
  return measuring_ != before;
}

void CutSearch::halve_move() {
  move_ /= 2;
  other_side_tried_ = false;
  if (move_ < kFinestMove) {
    converge();
    return;
  }
  // The held cut's time may have been a lucky one that no probe beat:
  // more of its steps before the finer probes.
  measuring_ = held_;
  phase_ = Phase::kTimingHeld;
}

void CutSearch::next_probe() {
  phase_ = Phase::kProbing;
  while (move_ >= kFinestMove) {
    double probe = held_ + sign_ * move_;
    // The equal cut is a stop on the line: a move across it ends on it.
    if ((held_ > 0 && probe < 0) || (held_ < 0 && probe > 0)) probe = 0;
    probe = std::clamp(probe, lowest_, highest_);
    if (probe != held_) {
      measuring_ = probe;
      return;
    }
    // Against an end of the line: that side has nothing to offer.
    if (!other_side_tried_) {
      sign_ = -sign_;
      other_side_tried_ = true;
    } else {
      move_ /= 2;
      other_side_tried_ = false;
    }
  }
  converge();
}

void CutSearch::converge() {
  measuring_ = held_;
  phase_ = Phase::kConverged;
}

}  // namespace tandem::parallel
