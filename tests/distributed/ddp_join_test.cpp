// nn::Join: DistributedDataParallel when ranks have different numbers of
// batches (spec/distributed.md section 7, cases 30-32): no hang, replicas
// equal to the authoritative (last) rank's afterwards, the divisor of the
// averages, and throw_on_early_termination on every rank.
#include <gtest/gtest.h>

#include <string>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using testing::root_copy;
using testing::world;

// Every rank's parameters (and buffers) equal `root`'s, bitwise.
void expect_replicas_equal(const std::shared_ptr<ProcessGroup>& pg,
                           nn::Module& module,
                           int root,
                           bool buffers = true) {
  std::vector<Tensor> state = module.parameters();
  if (buffers) {
    for (const Tensor& b : module.buffers()) state.push_back(b);
  }
  for (size_t i = 0; i < state.size(); ++i) {
    Tensor theirs = state[i].detach().clone();
    pg->broadcast(theirs, BroadcastOptions().root_rank(root)).wait();
    EXPECT_TRUE(all_close(state[i].detach(), theirs, 0, 0))
        << "rank " << pg->rank() << ": state tensor " << i << " differs from rank "
        << root;
  }
}

// Rank r trains on 3 + 2r batches; afterwards every replica is the last
// rank's (case 30).
TEST(DdpJoin, UnevenInputsEndWithTheLastRanksReplicaEverywhere) {
  auto pg = world();
  manual_seed(5);
  nn::Sequential model(
      nn::Linear(4, 8), nn::BatchNorm1d(8), nn::ReLU(), nn::Linear(8, 2));
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0001));
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  Generator data(100 + static_cast<uint64_t>(pg->rank()));
  const int batches = 3 + 2 * pg->rank();
  nn::Join join(ddp);
  for (int i = 0; i < batches; ++i) {
    opt.zero_grad();
    mse_loss(ddp->forward(randn({6, 4}, data)), randn({6, 2}, data)).backward();
    opt.step();
  }
  join.finish();
  EXPECT_EQ(join.authoritative_rank(), pg->size() - 1);
  EXPECT_EQ(join.shadowed_iterations(), 2 * (pg->size() - 1 - pg->rank()));
  expect_replicas_equal(pg, *model, pg->size() - 1);
  // Training goes on normally after the Join (each rank's batch-norm
  // statistics then take its own batch, as always in DDP).
  opt.zero_grad();
  mse_loss(ddp->forward(randn({6, 4}, data)), randn({6, 2}, data)).backward();
  opt.step();
  expect_replicas_equal(pg, *model, 0, /*buffers=*/false);
}

// Linear(5, 5) without bias on ones * 50, summed: the gradient is the same
// on every rank; the last rank has 2 more iterations (case 31).
TEST(DdpJoin, TheDivisorIsTheWorldSizeOrTheActiveRanks) {
  auto pg = world();
  for (bool initial : {true, false}) {
    nn::Linear layer(nn::LinearOptions(5, 5).bias(false));
    nn::DistributedDataParallel ddp(layer);
    const Tensor x = full({3, 5}, 50.0);
    const int last = pg->size() - 1;
    const int iterations = 3 + (pg->rank() == last ? 2 : 0);
    nn::Join join(ddp, nn::JoinOptions().divide_by_initial_world_size(initial));
    for (int i = 0; i < iterations; ++i) {
      layer->zero_grad();
      ddp->forward(x).sum().backward();
      // d(sum(x W^T))/dW = the column sums of x, 150, on every rank.
      const bool alone_now = i >= 3;
      const double expected = alone_now && initial ? 150.0 / pg->size() : 150.0;
      EXPECT_TRUE(all_close(layer->weight.grad(), full({5, 5}, expected), 1e-6, 0))
          << "rank " << pg->rank() << ", iteration " << i << ", divide by the initial "
          << "world size " << initial;
    }
    join.finish();
  }
}

// throw_on_early_termination: rank 0 has 3 batches, the others 5; every
// rank raises after 3 iterations (case 32).
TEST(DdpJoin, ThrowOnEarlyTerminationRaisesOnEveryRank) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  nn::Linear layer(3, 2);
  nn::DistributedDataParallel ddp(layer);
  const int batches = pg->rank() == 0 ? 3 : 5;
  int done = 0;
  std::string error;
  nn::Join join(ddp, nn::JoinOptions().throw_on_early_termination(true));
  try {
    for (int i = 0; i < batches; ++i) {
      layer->zero_grad();
      ddp->forward(ones({2, 3})).sum().backward();
      ++done;
    }
    join.finish();
  } catch (const tandem::Error& e) {
    error = e.what();
  }
  EXPECT_EQ(done, 3) << "rank " << pg->rank();
  if (pg->rank() == 0) {
    EXPECT_EQ(error, "Rank 0 exhausted all inputs.");
  } else {
    EXPECT_EQ(
        error,
        "Detected at least one rank that exhausted inputs. Throwing across all ranks.");
  }
  // The group is healthy: the next collective works on every rank.
  pg->barrier().wait();
}

TEST(DdpJoin, EvenInputsNeedNoShadowing) {
  auto pg = world();
  nn::Linear layer(3, 2);
  nn::DistributedDataParallel ddp(layer);
  nn::Join join(ddp);
  for (int i = 0; i < 2; ++i) {
    layer->zero_grad();
    ddp->forward(ones({2, 3})).sum().backward();
  }
  join.finish();
  EXPECT_EQ(join.shadowed_iterations(), 0);
  EXPECT_EQ(join.authoritative_rank(), pg->size() - 1);
}

TEST(DdpJoin, NoSyncInsideAJoinIsShadowedToo) {
  auto pg = world();
  nn::Linear layer(3, 2);
  nn::DistributedDataParallel ddp(layer);
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  nn::Join join(ddp);
  const int rounds = 1 + pg->rank();  // each: one no_sync micro-step, one synchronized
  for (int i = 0; i < rounds; ++i) {
    opt.zero_grad();
    {
      auto guard = ddp->no_sync();
      ddp->forward(full({2, 3}, 1.0 + pg->rank())).sum().backward();
    }
    ddp->forward(full({2, 3}, 2.0)).sum().backward();
    opt.step();
  }
  join.finish();
  expect_replicas_equal(pg, *layer, pg->size() - 1);
}

TEST(DdpJoin, ASecondJoinOnTheSameModuleIsAnError) {
  nn::Linear layer(3, 2);
  nn::DistributedDataParallel ddp(layer);
  nn::Join join(ddp);
  EXPECT_TRUE(
      tandem::testing::throws_with([&] { nn::Join again(ddp); }, "in a Join already"));
  join.finish();
  EXPECT_TRUE(tandem::testing::throws_with([&] { join.finish(); }, "called already"));
}

}  // namespace
}  // namespace tandem::distributed
