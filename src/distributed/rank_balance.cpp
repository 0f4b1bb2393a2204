#include "distributed/rank_balance.h"

#include <algorithm>
#include <utility>

#include "tandem/ops/factory.h"

namespace tandem::distributed::detail {

RankBalance::RankBalance(ProcessGroup& group,
                         parallel::Balance balance,
                         std::optional<std::vector<double>> shares,
                         int64_t micro_batch)
    : group_(group), micro_batch_(micro_batch) {
  const auto world = static_cast<size_t>(group_.size());
  if (shares) {
    parallel::check_shares(*shares, world, "DistributedDataParallelOptions::shares");
  }
  if (balance == parallel::Balance::kAuto) {
    balancer_.emplace(shares.value_or(std::vector<double>(world, 1.0)));
  } else {
    TANDEM_CHECK(shares.has_value() || micro_batch_ > 0,
                 "RankBalance: an even cut of rows needs no balance");
    fixed_ = std::move(shares);
  }
}

RankStep RankBalance::step(int64_t rows, double previous_seconds, uint64_t seed) {
  const int world = group_.size();
  const auto now = std::chrono::steady_clock::now();
  constexpr int64_t kFields = 5;
  Tensor all = empty({world * kFields}, kInt64);
  Tensor mine = empty({kFields}, kInt64);
  int64_t* m = mine.data_ptr<int64_t>();
  m[0] = rows;
  m[1] = previous_rows_;
  m[2] = static_cast<int64_t>(previous_seconds * 1e9);  // nanoseconds
  m[3] = static_cast<int64_t>(seed);
  m[4] = previous_rows_ > 0
             ? std::chrono::duration_cast<std::chrono::nanoseconds>(now - previous_step_)
                   .count()
             : 0;
  group_.allgather_into_tensor(all, mine).wait();
  previous_rows_ = rows;
  previous_step_ = now;
  const int64_t* a = all.data_ptr<int64_t>();
  RankStep step;
  int64_t total = 0;
  std::vector<int64_t> done(static_cast<size_t>(world));
  std::vector<double> seconds(static_cast<size_t>(world));
  int64_t step_nanoseconds = 0;
  for (int r = 0; r < world; ++r) {
    step.rows.push_back(a[kFields * r]);
    total += a[kFields * r];
    done[static_cast<size_t>(r)] = a[kFields * r + 1];
    seconds[static_cast<size_t>(r)] = static_cast<double>(a[kFields * r + 2]) * 1e-9;
    step_nanoseconds = std::max(step_nanoseconds, a[kFields * r + 4]);
  }
  step.seed = static_cast<uint64_t>(a[3]);
  bool any_previous = false;
  for (int64_t d : done) any_previous = any_previous || d > 0;
  if (balancer_ && any_previous) {
    balancer_->observe(done, seconds, static_cast<double>(step_nanoseconds) * 1e-9);
  }
  step.grad_weight =
      total > 0 ? static_cast<double>(rows) * world / static_cast<double>(total) : 0.0;
  return step;
}

std::vector<int64_t> RankBalance::cut_units(int64_t units) const {
  if (balancer_) return balancer_->cut(units);
  if (fixed_) return parallel::cut_by_shares(units, *fixed_);
  return parallel::split_evenly(units, static_cast<size_t>(group_.size()));
}

std::vector<int64_t> RankBalance::cut(int64_t rows) const {
  if (micro_batch_ == 0) return cut_units(rows);
  const int64_t count = (rows + micro_batch_ - 1) / micro_batch_;
  std::vector<int64_t> parts = cut_units(count);
  // Every rank takes part in the tree's exchange with at least one
  // micro-batch: one moves from the largest part to each empty one.
  if (count >= static_cast<int64_t>(parts.size())) {
    for (int64_t& part : parts) {
      if (part > 0) continue;
      --*std::max_element(parts.begin(), parts.end());
      part = 1;
    }
  }
  std::vector<int64_t> cut;
  int64_t start = 0;
  for (int64_t part : parts) {
    const int64_t end = start + part;
    cut.push_back(std::min(end * micro_batch_, rows) -
                  std::min(start * micro_batch_, rows));
    start = end;
  }
  return cut;
}

std::vector<double> RankBalance::shares() const {
  if (balancer_) return balancer_->shares();
  if (fixed_) return parallel::normalized(*fixed_);
  return std::vector<double>(static_cast<size_t>(group_.size()),
                             1.0 / static_cast<double>(group_.size()));
}

}  // namespace tandem::distributed::detail
