// DistributedDataParallel with uneven parts (issue 18): with shares the
// ranks' gradients are weighted by their rows, so the result is the whole
// batch's gradient (1e-12 in float64 against one process on the whole
// batch), the ranks agree on the cut, and under kAuto the cut follows a
// rank made slow on purpose. Runs with 1, 2 and 3 processes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using tandem::testing::throws_with;
using testing::world;

nn::Sequential make_mlp() {
  manual_seed(3);
  nn::Sequential model(nn::Linear(6, 8), nn::Tanh(), nn::Linear(8, 3));
  model->to(kFloat64);
  return model;
}

// This rank's rows of `t` under the cut `parts`.
Tensor part_of(const Tensor& t, const std::vector<int64_t>& parts, int rank) {
  int64_t start = 0;
  for (int r = 0; r < rank; ++r) start += parts[static_cast<size_t>(r)];
  return t.narrow(0, start, parts[static_cast<size_t>(rank)]);
}

// Shares 1, 2, 3, ... for the ranks: every part a different size.
std::vector<double> rising_shares(int world_size) {
  std::vector<double> shares;
  for (int r = 0; r < world_size; ++r) shares.push_back(r + 1.0);
  return shares;
}

TEST(DdpShares, UnevenPartsGiveTheWholeBatchGradient) {
  auto pg = world();
  manual_seed(11);
  for (const int64_t rows : {int64_t{12}, int64_t{7}, int64_t{25}}) {
    const Tensor x = randn({rows, 6}).to(kFloat64);
    const Tensor y = randint(3, {rows});
    nn::Sequential reference = make_mlp();
    cross_entropy(reference->forward(x), y).backward();

    nn::Sequential model = make_mlp();
    nn::DistributedDataParallel ddp(
        model, nn::DistributedDataParallelOptions().shares(rising_shares(pg->size())));
    const std::vector<int64_t> parts = ddp->cut(rows);
    EXPECT_EQ(parts, parallel::cut_by_shares(rows, rising_shares(pg->size())));
    const Tensor mine_x = part_of(x, parts, pg->rank());
    const Tensor mine_y = part_of(y, parts, pg->rank());
    // An empty part (7 rows over 3 ranks can leave none) adds zeros.
    const Tensor out = ddp->forward(mine_x);
    (mine_x.size(0) > 0 ? cross_entropy(out, mine_y) : out.sum() * 0.0).backward();
    const auto want = reference->parameters();
    const auto got = model->parameters();
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_TRUE(all_close(got[i].grad(), want[i].grad(), 1e-12, 1e-14))
          << "parameter " << i << ", " << rows << " rows over " << pg->size() << " ranks";
    }
  }
}

TEST(DdpShares, BadSharesAreNamed) {
  auto pg = world();
  EXPECT_TRUE(throws_with(
      [&] {
        nn::DistributedDataParallel ddp(
            make_mlp(),
            nn::DistributedDataParallelOptions().shares(rising_shares(pg->size() + 1)));
      },
      "DistributedDataParallelOptions::shares: expected one share per device"));
}

// Rank size-1 sleeps 50 µs a row in its forward: it is the slow one.
struct SlowLastRankImpl : nn::Cloneable<SlowLastRankImpl> {
  SlowLastRankImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(4, 1)); }
  Tensor forward(const Tensor& x) {
    auto pg = world();
    if (pg->size() > 1 && pg->rank() == pg->size() - 1) {
      std::this_thread::sleep_for(std::chrono::microseconds(50 * x.size(0)));
    }
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(SlowLastRank);

TEST(DdpShares, AutoMovesRowsAwayFromASlowRank) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs two processes";
  manual_seed(5);
  SlowLastRank model;
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().balance(nn::Balance::kAuto));
  const int64_t rows = 120;
  const Tensor x = randn({rows, 4});
  for (int step = 0; step < 12; ++step) {
    const std::vector<int64_t> parts = ddp->cut(rows);
    int64_t sum = 0;
    for (int64_t p : parts) sum += p;
    ASSERT_EQ(sum, rows);
    ddp->forward(part_of(x, parts, pg->rank())).sum().backward();
  }
  const std::vector<double> shares = ddp->shares();
  const double slow = shares.back();
  EXPECT_LT(slow, 0.5 / pg->size()) << "the slow rank keeps a share of " << slow;
  // Every rank holds the same plan.
  Tensor mine = from_blob(const_cast<double*>(shares.data()),
                          {static_cast<int64_t>(shares.size())},
                          kFloat64)
                    .clone();
  Tensor all = empty({pg->size() * mine.numel()}, kFloat64);
  pg->allgather_into_tensor(all, mine).wait();
  for (int r = 1; r < pg->size(); ++r) {
    EXPECT_TRUE(all_close(all.narrow(0, r * mine.numel(), mine.numel()), mine, 0, 0));
  }
}

}  // namespace
}  // namespace tandem::distributed
