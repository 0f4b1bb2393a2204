#include "distributed/rank_balance.h"

#include <utility>

#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {

RankBalance::RankBalance(ProcessGroup& group,
                         parallel::Balance balance,
                         std::optional<std::vector<double>> shares)
    : group_(group) {
  const auto world = static_cast<size_t>(group_.size());
  if (shares) {
    parallel::check_shares(*shares, world, "DistributedDataParallelOptions::shares");
  }
  if (balance == parallel::Balance::kAuto) {
    balancer_.emplace(shares.value_or(std::vector<double>(world, 1.0)));
  } else {
    TANDEM_CHECK(shares.has_value(), "RankBalance: an even cut needs no balance");
    fixed_ = std::move(shares);
  }
}

double RankBalance::step(int64_t rows, double previous_seconds) {
  const int world = group_.size();
  Tensor all = empty({world * 3}, kFloat64);
  Tensor mine = empty({3}, kFloat64);
  double* m = mine.data_ptr<double>();
  m[0] = static_cast<double>(rows);
  m[1] = static_cast<double>(previous_rows_);
  m[2] = previous_seconds;
  group_.allgather_into_tensor(all, mine).wait();
  previous_rows_ = rows;
  const double* a = all.data_ptr<double>();
  double total = 0;
  std::vector<int64_t> done(static_cast<size_t>(world));
  std::vector<double> seconds(static_cast<size_t>(world));
  for (int r = 0; r < world; ++r) {
    total += a[3 * r];
    done[static_cast<size_t>(r)] = static_cast<int64_t>(a[3 * r + 1]);
    seconds[static_cast<size_t>(r)] = a[3 * r + 2];
  }
  bool any_previous = false;
  for (int64_t d : done) any_previous = any_previous || d > 0;
  if (balancer_ && any_previous) balancer_->observe(done, seconds);
  return total > 0 ? static_cast<double>(rows) * world / total : 0.0;
}

std::vector<int64_t> RankBalance::cut(int64_t rows) const {
  return balancer_ ? balancer_->cut(rows) : parallel::cut_by_shares(rows, *fixed_);
}

std::vector<double> RankBalance::shares() const {
  return balancer_ ? balancer_->shares() : parallel::normalized(*fixed_);
}

}  // namespace tandem::distributed::detail
