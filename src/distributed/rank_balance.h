// Private to the distributed layer: DistributedDataParallel's shares of the
// global batch across processes (DistributedDataParallelOptions::balance
// and ::shares; tandem/parallel/shares.h has the cut rules).
//
// At every synchronized training forward the ranks exchange, in one small
// allgather, the rows each got this step and the rows and computing time
// (forward to the end of backward's last gradient, waits excluded) of each
// one's previous step. From it every rank knows
// - the step's global batch, and so its own gradient weight: rows * world /
//   total, which makes DDP's average the whole batch's gradient when the
//   parts differ (PyTorch divides by the world size whatever the parts,
//   pytorch/pytorch#37359); and
// - under Balance::kAuto, the same rates as every other rank, from which
//   each computes the same plan (ShareBalancer, deterministic) for the
//   steps to come: cut(rows) is then the same on every rank without a
//   second message.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tandem/distributed/process_group.h"
#include "tandem/parallel/share_balancer.h"
#include "tandem/parallel/shares.h"

namespace tandem::distributed::detail {

class RankBalance {
 public:
  /// `shares`, one per rank, are fixed under kEven (then required), the
  /// start under kAuto.
  RankBalance(ProcessGroup& group,
              parallel::Balance balance,
              std::optional<std::vector<double>> shares);

  /// One synchronized forward of `rows` rows here, after a previous step
  /// that computed for `previous_seconds` (0 for none); returns this rank's
  /// gradient weight.
  double step(int64_t rows, double previous_seconds);

  /// Every rank's rows of a global batch of `rows` under the current plan.
  std::vector<int64_t> cut(int64_t rows) const;
  /// The current shares of the ranks, fractions that sum to 1.
  std::vector<double> shares() const;

 private:
  ProcessGroup& group_;
  std::optional<std::vector<double>> fixed_;
  std::optional<parallel::ShareBalancer> balancer_;
  int64_t previous_rows_ = 0;
};

}  // namespace tandem::distributed::detail
