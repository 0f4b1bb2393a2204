// DistributedDataParallel's communication hooks (spec/distributed.md
// section 8, cases 33-34): the built-in allreduce hook gives the default's
// gradients bitwise, the noop hook the local ones, a hook's result of the
// wrong size is a clear error on every rank, and a hook registers once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using tandem::testing::throws_with;
using testing::world;

nn::Sequential make_mlp() {
  manual_seed(11);
  return nn::Sequential(nn::Linear(6, 12), nn::Tanh(), nn::Linear(12, 3));
}

// This rank's batch (different on every rank).
Tensor local_batch() {
  Generator g(200 + static_cast<uint64_t>(get_rank()));
  return randn({4, 6}, g);
}

// The gradients of a DDP over make_mlp() after one backward, with `hook`
// (none if empty).
std::vector<Tensor> ddp_gradients(const nn::CommHook& hook) {
  nn::Sequential model = make_mlp();
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0002));
  if (hook) ddp->register_comm_hook(hook);
  ddp->forward(local_batch()).pow(2).sum().backward();
  std::vector<Tensor> grads;
  for (const Tensor& p : model->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

// The hook's allreduce goes over MPI; the default, on one host, adds in
// shared memory in rank order: the same bits for two ranks (one order), the
// same up to rounding for more, and the same bits again without the window.
TEST(DdpCommHook, TheAllreduceHookGivesTheDefaultGradientsBitwise) {
  const auto hooked = ddp_gradients(nn::comm_hooks::allreduce(world()));
  const auto plain = ddp_gradients(nullptr);
  setenv("TANDEM_SHARED_MEMORY", "0", 1);
  const auto over_mpi = ddp_gradients(nullptr);
  unsetenv("TANDEM_SHARED_MEMORY");
  ASSERT_EQ(plain.size(), hooked.size());
  const double tol = get_world_size() <= 2 ? 0 : 1e-6;
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_TRUE(all_close(hooked[i], over_mpi[i], 0, 0))
        << "rank " << get_rank() << ", " << i;
    EXPECT_TRUE(all_close(hooked[i], plain[i], tol, tol))
        << "rank " << get_rank() << ", " << i;
  }
}

TEST(DdpCommHook, TheNoopHookKeepsTheLocalGradients) {
  const auto hooked = ddp_gradients(nn::comm_hooks::noop());
  nn::Sequential alone = make_mlp();
  alone->forward(local_batch()).pow(2).sum().backward();
  const auto params = alone->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(all_close(hooked[i], params[i].grad(), 1e-6, 1e-7))
        << "rank " << get_rank() << ", " << i;
  }
}

TEST(DdpCommHook, AHookSeesEveryBucketInOrder) {
  std::vector<size_t> seen;
  size_t count = 0;
  int64_t elements = 0;
  auto inner = nn::comm_hooks::allreduce(world());
  ddp_gradients([&](nn::GradBucket& bucket) {
    seen.push_back(bucket.index);
    count = bucket.count;
    elements += bucket.buffer.numel();
    EXPECT_EQ(bucket.gradients.size(), bucket.parameters.size());
    return inner(bucket);
  });
  ASSERT_GT(count, 1u);
  ASSERT_EQ(seen.size(), count);
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], i);
  EXPECT_EQ(elements, 6 * 12 + 12 + 12 * 3 + 3);
}

TEST(DdpCommHook, AResultOfTheWrongSizeIsAnErrorOnEveryRank) {
  nn::Sequential model = make_mlp();
  nn::DistributedDataParallel ddp(model);
  ddp->register_comm_hook([](nn::GradBucket& bucket) {
    return Work::completed({zeros({bucket.buffer.numel() + 1})});
  });
  EXPECT_TRUE(throws_with([&] { ddp->forward(local_batch()).sum().backward(); },
                          "the communication hook's result for bucket 0 has"));
}

TEST(DdpCommHook, RegistersOnceAndBeforeTraining) {
  nn::Sequential model = make_mlp();
  nn::DistributedDataParallel ddp(model);
  ddp->register_comm_hook(nn::comm_hooks::noop());
  EXPECT_TRUE(throws_with([&] { ddp->register_comm_hook(nn::comm_hooks::noop()); },
                          "register_comm_hook or register_builtin_comm_hook can only be "
                          "called once."));
  nn::Sequential other = make_mlp();
  nn::DistributedDataParallel trained(other);
  trained->forward(local_batch()).sum().backward();
  EXPECT_TRUE(throws_with([&] { trained->register_comm_hook(nn::comm_hooks::noop()); },
                          "before the first synchronized backward"));
}

}  // namespace
}  // namespace tandem::distributed
