// DistributedDataParallel::no_sync() and forwards without gradients
// (spec/distributed.md §5, §12 cases 25-27): backward passes of forwards run
// inside the window accumulate locally with no collective at all, and the
// next synchronized backward averages everything accumulated; what counts
// is where the forward ran; a forward under NoGradGuard issues no
// collective and leaves the next iteration intact; the first synchronized
// forward after a window skips the buffer broadcast, as PyTorch's does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using testing::root_copy;
using testing::share;
using testing::world;

// No buffers, so only gradient reductions can issue collectives.
nn::Sequential make_mlp() {
  return nn::Sequential(nn::Linear(6, 12), nn::Tanh(), nn::Linear(12, 1));
}

nn::Sequential rank_dependent_mlp() {
  manual_seed(700 + world()->rank());
  return make_mlp();
}

// A bare copy of `model`'s parameters, and of its grads where defined.
nn::Sequential replica_of(const nn::Sequential& model) {
  nn::Sequential copy = make_mlp();
  NoGradGuard no_grad;
  for (const auto& p : copy->named_parameters()) {
    const Tensor original = model->named_parameters()[p.key()];
    Tensor(p.value()).copy_(original);
    if (original.grad().defined())
      Tensor(p.value()).mutable_grad() = original.grad().clone();
  }
  return copy;
}

// Micro-batch `m` of the global data, the same on every rank.
std::pair<Tensor, Tensor> micro_batch(int m) {
  Generator g(800 + m);
  const int64_t rows = 2 * world()->size();
  return {randn({rows, 6}, g), randn({rows, 1}, g)};
}

Tensor ddp_loss(nn::DistributedDataParallel& ddp, const std::pair<Tensor, Tensor>& xy) {
  auto pg = world();
  return mse_loss(ddp->forward(share(xy.first, pg->rank(), pg->size())),
                  share(xy.second, pg->rank(), pg->size()));
}

// Mean-loss backward passes of `model` over micro-batches `ms`, on the rows
// of rank `rank` (or all rows when rank < 0), accumulated.
void accumulate(nn::Sequential model, const std::vector<int>& ms, int rank) {
  const int size = world()->size();
  for (int m : ms) {
    auto [x, y] = micro_batch(m);
    if (rank >= 0) {
      x = share(x, rank, size);
      y = share(y, rank, size);
    }
    mse_loss(model->forward(x), y).backward();
  }
}

void expect_grads(const nn::Sequential& got,
                  const nn::Sequential& want,
                  const std::string& where) {
  for (const auto& p : want->named_parameters()) {
    const Tensor grad = got->named_parameters()[p.key()].grad();
    ASSERT_TRUE(grad.defined()) << where << ": " << p.key();
    EXPECT_TRUE(all_close(grad, p.value().grad(), 1e-5, 1e-6))
        << "rank " << world()->rank() << ", " << where << ": " << p.key();
  }
}

// On ranks other than 0 the first weight's grad differs from rank 0's (a
// collective).
void expect_local_grads_differ(const nn::Sequential& model, const std::string& where) {
  const Tensor grad = model->parameters().front().grad();
  const Tensor root = root_copy(world(), grad);
  if (world()->rank() != 0) {
    EXPECT_FALSE(equal(grad, root)) << "rank " << world()->rank() << ", " << where;
  }
}

// Three micro-batches inside no_sync, one synchronized; checks everything.
// The window issues no collective but `rebuild_broadcasts`.
void window_then_sync(nn::DistributedDataParallel& ddp,
                      const nn::Sequential& local,
                      const std::vector<int>& ms,
                      const std::string& where,
                      uint64_t rebuild_broadcasts = 0) {
  auto pg = world();
  // The references start from the grads as they are.
  nn::Sequential mine = replica_of(local);
  nn::Sequential reference = replica_of(local);
  const uint64_t before = pg->sequence_number();
  {
    auto guard = ddp->no_sync();
    EXPECT_FALSE(ddp->require_backward_grad_sync());
    for (size_t k = 0; k + 1 < ms.size(); ++k)
      ddp_loss(ddp, micro_batch(ms[k])).backward();
  }
  EXPECT_TRUE(ddp->require_backward_grad_sync());
  EXPECT_EQ(pg->sequence_number(), before + rebuild_broadcasts)
      << "rank " << pg->rank() << ", " << where << ": a collective inside no_sync";
  accumulate(mine, std::vector<int>(ms.begin(), ms.end() - 1), pg->rank());
  expect_grads(local, mine, where + ", local accumulation");
  if (pg->size() >= 2) expect_local_grads_differ(local, where);
  ddp_loss(ddp, micro_batch(ms.back())).backward();
  accumulate(reference, ms, -1);
  expect_grads(local, reference, where + ", after the synchronized backward");
}

TEST(DdpNoSync, WindowAccumulatesLocallyAndTheNextSyncAveragesEverything) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp();
  nn::DistributedDataParallel ddp(local);
  // Before any synchronized backward, grads set to none.
  window_then_sync(ddp, local, {0, 1, 2, 3}, "first window");
  // Accumulating on top of the averages, across the bucket rebuild (at
  // the window's first forward, which moves the grads into new views).
  // That rebuild broadcasts rank 0's plan, as PyTorch's _rebuild_buckets
  // does in any forward with gradients, inside no_sync too.
  // The rebuild broadcasts rank 0's buckets and, with several ranks, agrees
  // on their shared-memory window (two more).
  window_then_sync(ddp,
                   local,
                   {13, 14, 15, 16},
                   "window on top of the averages",
                   world()->size() > 1 ? 3 : 1);
  EXPECT_TRUE(ddp->stats().buckets_rebuilt);
  // A plain iteration.
  local->zero_grad();
  nn::Sequential reference = replica_of(local);
  ddp_loss(ddp, micro_batch(4)).backward();
  accumulate(reference, {4}, -1);
  expect_grads(local, reference, "plain iteration");
  // Grads kept as zeroed bucket views; then set to none.
  local->zero_grad(/*set_to_none=*/false);
  window_then_sync(ddp, local, {5, 6, 7, 8}, "window over zeroed views");
  local->zero_grad();
  window_then_sync(ddp, local, {9, 10, 11, 12}, "window after set_to_none");
}

TEST(DdpNoSync, WhereTheForwardRanDecides) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp();
  nn::DistributedDataParallel ddp(local);
  // Forward inside the window, backward after it: not synchronized.
  Tensor loss;
  {
    auto guard = ddp->no_sync();
    loss = ddp_loss(ddp, micro_batch(20));
  }
  nn::Sequential mine = replica_of(local);
  uint64_t before = pg->sequence_number();
  loss.backward();
  EXPECT_EQ(pg->sequence_number(), before) << "rank " << pg->rank();
  accumulate(mine, {20}, pg->rank());
  expect_grads(local, mine, "forward inside, backward outside");
  if (pg->size() >= 2)
    expect_local_grads_differ(local, "forward inside, backward outside");

  // Forward outside, backward inside a new window: synchronized.
  local->zero_grad();
  nn::Sequential reference = replica_of(local);
  loss = ddp_loss(ddp, micro_batch(21));
  before = pg->sequence_number();
  {
    auto guard = ddp->no_sync();
    loss.backward();
  }
  EXPECT_GT(pg->sequence_number(), before) << "rank " << pg->rank();
  accumulate(reference, {21}, -1);
  expect_grads(local, reference, "forward outside, backward inside");
  EXPECT_EQ(ddp->stats().synchronized_backwards, 1);
}

TEST(DdpNoSync, GuardsNestAndRestore) {
  nn::Sequential local = rank_dependent_mlp();
  nn::DistributedDataParallel ddp(local);
  EXPECT_TRUE(ddp->require_backward_grad_sync());
  {
    auto outer = ddp->no_sync();
    {
      auto inner = ddp->no_sync();
      EXPECT_FALSE(ddp->require_backward_grad_sync());
    }
    EXPECT_FALSE(ddp->require_backward_grad_sync());
  }
  EXPECT_TRUE(ddp->require_backward_grad_sync());
}

TEST(DdpNoSync, ANoGradForwardIssuesNoCollectiveAndBreaksNothing) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp();
  nn::DistributedDataParallel ddp(local);
  for (int i = 0; i < 3; ++i) {
    const std::string where = "iteration " + std::to_string(i);
    const uint64_t before = pg->sequence_number();
    {
      NoGradGuard no_grad;
      local->eval();
      const Tensor out = ddp->forward(micro_batch(30 + i).first);
      EXPECT_FALSE(out.requires_grad());
      local->train();
    }
    EXPECT_EQ(pg->sequence_number(), before) << "rank " << pg->rank() << ", " << where;
    local->zero_grad();
    nn::Sequential reference = replica_of(local);
    ddp_loss(ddp, micro_batch(40 + i)).backward();
    accumulate(reference, {40 + i}, -1);
    expect_grads(local, reference, where);
  }
  EXPECT_EQ(ddp->stats().synchronized_backwards, 3);
}

TEST(DdpNoSync, TheFirstSynchronizedForwardAfterAWindowSkipsTheBufferBroadcast) {
  auto pg = world();
  manual_seed(900 + pg->rank());
  nn::Sequential local(nn::Linear(6, 8), nn::BatchNorm1d(8), nn::Linear(8, 1));
  nn::DistributedDataParallel ddp(local);
  auto forward_collectives = [&](const std::pair<Tensor, Tensor>& xy, Tensor& loss) {
    const uint64_t before = pg->sequence_number();
    loss = ddp_loss(ddp, xy);
    return pg->sequence_number() - before;
  };
  Tensor loss;
  {
    auto guard = ddp->no_sync();
    // The first forward broadcasts rank 0's buffers (construction armed it)...
    EXPECT_GT(forward_collectives(micro_batch(50), loss), 0u) << "rank " << pg->rank();
    loss.backward();
    // ...the next ones in the window do not.
    EXPECT_EQ(forward_collectives(micro_batch(51), loss), 0u) << "rank " << pg->rank();
    loss.backward();
  }
  // Nor does the first synchronized forward after it (PyTorch's
  // require_forward_param_sync); the one after that does.
  EXPECT_EQ(forward_collectives(micro_batch(52), loss), 0u) << "rank " << pg->rank();
  loss.backward();
  local->zero_grad();
  EXPECT_GT(forward_collectives(micro_batch(53), loss), 0u) << "rank " << pg->rank();
  loss.backward();
  // Every rank's running_mean is rank 0's updated by its own batch: the
  // replicas' buffers differ after a training forward (several ranks).
  const Tensor mean = local->named_buffers()["1.running_mean"];
  const Tensor root = root_copy(pg, mean);
  if (pg->rank() != 0) {
    EXPECT_FALSE(equal(mean, root)) << "rank " << pg->rank();
  }
}

}  // namespace
}  // namespace tandem::distributed
