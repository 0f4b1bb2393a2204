// check_replicas_every: DistributedDataParallel's optional check that the
// replicas stay bitwise equal (spec/distributed.md section 13 item 8).
#include <gtest/gtest.h>

#include <string>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using testing::world;

TEST(DdpReplicaCheck, EqualStepsPassTheCheck) {
  nn::Linear layer(4, 3);
  nn::DistributedDataParallel ddp(
      layer, nn::DistributedDataParallelOptions().check_replicas_every(2));
  optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
  for (int i = 0; i < 6; ++i) {
    opt.zero_grad();
    ddp->forward(full({2, 4}, 1.0 + get_rank())).sum().backward();
    opt.step();
  }
}

TEST(DdpReplicaCheck, ARankThatDriftsIsNamedOnEveryRank) {
  auto pg = world();
  if (pg->size() < 2) GTEST_SKIP() << "needs 2 ranks";
  nn::Linear layer(4, 3);
  nn::DistributedDataParallel ddp(
      layer, nn::DistributedDataParallelOptions().check_replicas_every(2));
  std::string error;
  for (int i = 0; i < 3 && error.empty(); ++i) {
    try {
      ddp->forward(ones({2, 4})).sum().backward();
    } catch (const ReplicaMismatchError& e) {
      error = e.what();
      break;
    }
    if (i == 1 && pg->rank() == 1) {  // a rank-dependent update
      NoGradGuard no_grad;
      layer->weight.add_(1e-3);
    }
  }
  EXPECT_NE(
      error.find("after 2 synchronized backward passes the parameters of rank(s) 1 "),
      std::string::npos)
      << "rank " << pg->rank() << ": " << error;
}

TEST(DdpReplicaCheck, NegativeIntervalsAreRefused) {
  nn::Linear layer(2, 2);
  EXPECT_TRUE(tandem::testing::throws_with(
      [&] {
        nn::DistributedDataParallel ddp(
            layer, nn::DistributedDataParallelOptions().check_replicas_every(-1));
      },
      "check_replicas_every must be >= 0"));
}

}  // namespace
}  // namespace tandem::distributed
