// Private to the distributed layer: DistributedDataParallel's shares of the
// global batch across processes (DistributedDataParallelOptions::balance
// and ::shares; tandem/parallel/shares.h has the cut rules).
//
// At every synchronized training forward the ranks exchange, in one small
// allgather, the rows each got this step, the rows and computing time
// (forward to the end of backward's last gradient, waits excluded) of each
// one's previous step, and the wall time since each one's previous
// exchange (the whole step, allreduce and optimizer included). From it
// every rank knows
// - the step's global batch, and so its own gradient weight: rows * world /
//   total, which makes DDP's average the whole batch's gradient when the
//   parts differ (PyTorch divides by the world size whatever the parts,
//   pytorch/pytorch#37359); and
// - under Balance::kAuto, the same rates as every other rank, and the same
//   step time (the longest rank's: the ranks' clocks differ a little, the
//   plan must not), from which each computes the same plan (ShareBalancer
//   and its search, deterministic) for the steps to come: cut(rows) is then
//   the same on every rank without a second message;
// - in invariant mode, every rank's rows, so each knows where its part
//   lies in the batch, and rank 0's seed for the sample-keyed masks; the
//   cut then hands out whole micro-batches.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/distributed/process_group.h"
#include "tandem/parallel/share_balancer.h"
#include "tandem/parallel/shares.h"

namespace tandem::distributed::detail {

/// What one exchange told every rank.
struct RankStep {
  /// This rank's gradient weight: rows * world / total (0 for no rows).
  double grad_weight = 0;
  std::vector<int64_t> rows;  // every rank's rows this step
  uint64_t seed = 0;          // rank 0's
};

class RankBalance {
 public:
  /// `shares`, one per rank, are fixed under kEven, the start under kAuto;
  /// under kEven without shares, the parts differ by at most one
  /// micro-batch. `micro_batch` > 0 (invariant mode): cut() counts
  /// micro-batches of that many rows.
  RankBalance(ProcessGroup& group,
              parallel::Balance balance,
              std::optional<std::vector<double>> shares,
              int64_t micro_batch = 0);

  /// One synchronized forward of `rows` rows here, after a previous step
  /// that computed for `previous_seconds` (0 for none), drawing the masks
  /// from `seed`.
  RankStep step(int64_t rows, double previous_seconds, uint64_t seed = 0);

  /// Every rank's rows of a global batch of `rows` under the current plan:
  /// in invariant mode whole micro-batches, at least one per rank while
  /// there are enough (the last rank's last one may be short).
  std::vector<int64_t> cut(int64_t rows) const;
  /// The current shares of the ranks, fractions that sum to 1.
  std::vector<double> shares() const;

 private:
  ProcessGroup& group_;
  std::optional<std::vector<double>> fixed_;
  std::optional<parallel::ShareBalancer> balancer_;
  int64_t micro_batch_;
  int64_t previous_rows_ = 0;
  std::chrono::steady_clock::time_point previous_step_;  // the last exchange's

  // The cut of `units` (rows, or micro-batches) by the plan.
  std::vector<int64_t> cut_units(int64_t units) const;
};

}  // namespace tandem::distributed::detail
