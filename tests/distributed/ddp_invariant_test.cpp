// DistributedDataParallel in invariant mode (issue 18): 20 steps of SGD
// with momentum and of Adam reach bitwise the weights and optimizer state
// of nn::DataParallel in invariant mode on one device, under 1, 2 and 3
// processes, with even, uneven and auto shares, at batches that no process
// count divides (Note [Invariant mode across processes] in
// src/distributed/gradient_tree_across.cpp). Each rank computes the
// one-process reference itself.
#include <gtest/gtest.h>

#include "distributed_testing.h"
#include "support/invariant_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::Optimizer;
using tandem::testing::same_bits;
using tandem::testing::Task;
using tandem::testing::throws_with;
using testing::world;

constexpr int64_t kMicroBatch = 8;

// This rank's rows of `t` under the cut `parts`.
Tensor part_of(const Tensor& t, const std::vector<int64_t>& parts, int rank) {
  int64_t start = 0;
  for (int r = 0; r < rank; ++r) start += parts[static_cast<size_t>(r)];
  return t.narrow(0, start, parts[static_cast<size_t>(rank)]);
}

std::map<std::string, Tensor> one_process(const Task& task, Optimizer which) {
  manual_seed(7);
  nn::DataParallel dp(task.make(),
                      nn::DataParallelOptions()
                          .device_ids({Device("cpu:0")})
                          .invariant(true)
                          .micro_batch(kMicroBatch));
  return tandem::testing::train(
      task,
      [&](const Tensor& x, const Tensor& y) { return cross_entropy(dp(x), y); },
      *dp,
      which);
}

// The same run under DistributedDataParallel: each rank takes its planned
// rows of every batch, and its loss is its part of the whole batch's mean.
std::map<std::string, Tensor> processes(const Task& task,
                                        Optimizer which,
                                        nn::DistributedDataParallelOptions options) {
  manual_seed(7);
  nn::DistributedDataParallel ddp(task.make(),
                                  options.invariant(true).micro_batch(kMicroBatch));
  const int rank = world()->rank();
  return tandem::testing::train(
      task,
      [&](const Tensor& x, const Tensor& y) {
        const std::vector<int64_t> cut = ddp->cut(x.size(0));
        const Tensor mine = ddp(part_of(x, cut, rank));
        EXPECT_EQ(ddp->global_batch_rows(), x.size(0));
        return cross_entropy(mine, part_of(y, cut, rank), Tensor(), kSum) *
               (1.0 / static_cast<double>(x.size(0)));
      },
      *ddp,
      which);
}

std::vector<double> rising_shares(int world_size) {
  std::vector<double> shares;
  for (int r = 0; r < world_size; ++r) shares.push_back(r + 1.0);
  return shares;
}

void expect_same_bits_as_one_process(const Task& task) {
  for (const Optimizer which : {Optimizer::kSgdMomentum, Optimizer::kAdam}) {
    const auto want = one_process(task, which);
    const int size = world()->size();
    EXPECT_TRUE(same_bits(want, processes(task, which, {})))
        << task.name << ", " << optimizer_name(which) << ", even, rank "
        << world()->rank();
    EXPECT_TRUE(same_bits(
        want,
        processes(task,
                  which,
                  nn::DistributedDataParallelOptions().shares(rising_shares(size)))))
        << task.name << ", " << optimizer_name(which) << ", shares 1..n";
    EXPECT_TRUE(same_bits(
        want,
        processes(task,
                  which,
                  nn::DistributedDataParallelOptions().balance(nn::Balance::kAuto))))
        << task.name << ", " << optimizer_name(which) << ", auto";
  }
}

TEST(DdpInvariant, MlpWithDropoutHasTheBitsOfOneProcess) {
  expect_same_bits_as_one_process(tandem::testing::mlp_with_dropout());
}

TEST(DdpInvariant, CnnWithoutBatchNormHasTheBitsOfOneProcess) {
  expect_same_bits_as_one_process(tandem::testing::cnn_without_batch_norm());
}

TEST(DdpInvariant, TutorialModelHasTheBitsOfOneProcess) {
  expect_same_bits_as_one_process(tandem::testing::tutorial_model());
}

TEST(DdpInvariant, CutHandsOutWholeMicroBatchesAtLeastOneEach) {
  manual_seed(1);
  nn::DistributedDataParallel ddp(
      nn::Linear(3, 2),
      nn::DistributedDataParallelOptions().invariant(true).micro_batch(4));
  const int size = world()->size();
  const std::vector<int64_t> cut = ddp->cut(30);  // 8 micro-batches, the last of 2
  ASSERT_EQ(cut.size(), static_cast<size_t>(size));
  int64_t total = 0;
  for (size_t r = 0; r < cut.size(); ++r) {
    EXPECT_GE(cut[r], 1);
    if (r + 1 < cut.size()) {
      EXPECT_EQ(cut[r] % 4, 0) << "rank " << r;
    }
    total += cut[r];
  }
  EXPECT_EQ(total, 30);
}

TEST(DdpInvariant, RefusesPartsThatAreNotWholeMicroBatchesOnEveryRank) {
  const int size = world()->size();
  if (size < 2) GTEST_SKIP() << "one process holds the whole batch";
  manual_seed(1);
  nn::DistributedDataParallel ddp(
      nn::Linear(3, 2),
      nn::DistributedDataParallelOptions().invariant(true).micro_batch(4));
  // Three rows each: rank 0's part ends inside a micro-batch.
  EXPECT_TRUE(throws_with(
      [&] {
        ddp(randn({3, 3}));
      },
      "invariant mode needs every rank's part of the batch to be "
      "whole micro-batches of 4 rows"));
}

TEST(DdpInvariant, RefusesBatchNormNoSyncAndCommHooks) {
  manual_seed(1);
  nn::DistributedDataParallel bn(
      nn::Sequential(nn::Linear(3, 4), nn::BatchNorm1d(4)),
      nn::DistributedDataParallelOptions().invariant(true).micro_batch(4));
  const int64_t rows = 4 * world()->size();
  EXPECT_TRUE(throws_with(
      [&] {
        bn(randn({4, 3}));
      },
      "invariant mode cannot run BatchNorm1d at '1'"));
  nn::DistributedDataParallel ddp(
      nn::Linear(3, 2),
      nn::DistributedDataParallelOptions().invariant(true).micro_batch(4));
  {
    auto guard = ddp->no_sync();
    EXPECT_TRUE(throws_with([&] { ddp(randn({4, 3})); }, "inside no_sync()"));
  }
  EXPECT_TRUE(throws_with([&] { ddp->register_comm_hook(nn::comm_hooks::noop()); },
                          "invariant mode sums the gradients in its own tree"));
  // Still usable: a whole step runs.
  ddp(randn({4, 3})).sum().backward();
  EXPECT_TRUE(ddp->module()->parameters().front().grad().defined());
  EXPECT_EQ(ddp->global_batch_rows(), rows);
}

}  // namespace
}  // namespace tandem::distributed
