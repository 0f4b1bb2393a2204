// DistributedDataParallel's gradients and training against one process
// running the whole global batch (spec/distributed.md cases 9, 11, 17, the
// issue's 20 SGD steps): mean and summed losses, replicas bitwise equal
// after optimizer steps, gradient_as_bucket_view on and off, .grad as a view
// into its bucket, overlap off, both zero_grad flavours, float64. Every rank
// computes the one-process reference itself, on the whole batch.
#include <gtest/gtest.h>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using testing::root_copy;
using testing::share;
using testing::world;

nn::Sequential make_mlp() {
  return nn::Sequential(
      nn::Linear(10, 16), nn::ReLU(), nn::Linear(16, 8), nn::ReLU(), nn::Linear(8, 1));
}

// The global batch, the same on every rank.
std::pair<Tensor, Tensor> global_batch(int64_t rows,
                                       uint64_t seed,
                                       ScalarType dtype = kFloat32) {
  Generator g(seed);
  return {randn({rows, 10}, g).to(dtype), randn({rows, 1}, g).to(dtype)};
}

// A bare model holding `model`'s current parameters (not sharing them).
nn::Sequential replica_of(const nn::Sequential& model) {
  nn::Sequential copy = make_mlp();
  NoGradGuard no_grad;
  copy->to(model->parameters().front().dtype());
  for (const auto& p : copy->named_parameters()) {
    Tensor(p.value()).copy_(model->named_parameters()[p.key()]);
  }
  return copy;
}

// A model that differs on every rank, wrapped: rank 0's initial values win.
nn::Sequential rank_dependent_mlp(int rank) {
  manual_seed(100 + rank);
  return make_mlp();
}

// One DDP step on this rank's share of the global batch `xy`.
Tensor ddp_loss(nn::DistributedDataParallel& ddp,
                const std::pair<Tensor, Tensor>& xy,
                Reduction reduction = kMean) {
  auto pg = world();
  return mse_loss(ddp->forward(share(xy.first, pg->rank(), pg->size())),
                  share(xy.second, pg->rank(), pg->size()),
                  reduction);
}

void expect_grads_close(const nn::Sequential& got,
                        const nn::Sequential& want,
                        double scale,
                        double rtol,
                        double atol,
                        const std::string& where) {
  for (const auto& p : want->named_parameters()) {
    const Tensor grad = got->named_parameters()[p.key()].grad();
    ASSERT_TRUE(grad.defined()) << where << ": " << p.key();
    EXPECT_TRUE(all_close(grad, p.value().grad() * scale, rtol, atol))
        << "rank " << world()->rank() << ", " << where << ": " << p.key();
  }
}

// Every rank's parameters equal rank 0's bitwise (a collective per tensor).
void expect_replicas_equal(const nn::Sequential& model, const std::string& where) {
  for (const auto& p : model->named_parameters()) {
    EXPECT_TRUE(equal(p.value(), root_copy(world(), p.value())))
        << "rank " << world()->rank() << ", " << where << ": " << p.key();
  }
}

TEST(DistributedDataParallel, GradientsEqualOneProcessOnTheWholeBatch) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp(pg->rank());
  nn::DistributedDataParallel ddp(local);
  // After construction every rank holds rank 0's weights.
  expect_replicas_equal(local, "after construction");
  nn::Sequential reference = replica_of(local);
  auto xy = global_batch(8 * pg->size(), 3);
  mse_loss(reference->forward(xy.first), xy.second).backward();
  ddp_loss(ddp, xy).backward();
  expect_grads_close(local, reference, 1.0, 1e-5, 1e-7, "backward");
  // One SGD step keeps the replicas bitwise equal.
  optim::SGD opt(local->parameters(), optim::SGDOptions(0.1));
  opt.step();
  expect_replicas_equal(local, "after one SGD step");
}

TEST(DistributedDataParallel, SummedLossGivesTheSumDividedByTheWorldSize) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp(pg->rank());
  nn::DistributedDataParallel ddp(local);
  nn::Sequential reference = replica_of(local);
  auto xy = global_batch(4 * pg->size(), 11);
  mse_loss(reference->forward(xy.first), xy.second, kSum).backward();
  ddp_loss(ddp, xy, kSum).backward();
  expect_grads_close(local, reference, 1.0 / pg->size(), 1e-5, 1e-6, "summed loss");
}

TEST(DistributedDataParallel, TwentyMomentumSgdStepsMatchOneProcess) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp(pg->rank());
  nn::DistributedDataParallel ddp(local);
  nn::Sequential reference = replica_of(local);
  optim::SGD opt(local->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  optim::SGD ref_opt(reference->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  for (int step = 0; step < 20; ++step) {
    auto xy = global_batch(4 * pg->size(), 1000 + step);
    ref_opt.zero_grad();
    mse_loss(reference->forward(xy.first), xy.second).backward();
    ref_opt.step();
    opt.zero_grad();
    ddp_loss(ddp, xy).backward();
    opt.step();
  }
  for (const auto& p : reference->named_parameters()) {
    EXPECT_TRUE(all_close(local->named_parameters()[p.key()], p.value(), 1e-5, 1e-6))
        << "rank " << pg->rank() << ": " << p.key();
  }
  expect_replicas_equal(local, "after 20 steps");
  EXPECT_EQ(ddp->stats().synchronized_backwards, 20);
}

TEST(DistributedDataParallel, GradientAsBucketViewOnAndOffGiveBitwiseEqualGradients) {
  auto pg = world();
  nn::Sequential a = rank_dependent_mlp(pg->rank());
  nn::Sequential b = rank_dependent_mlp(pg->rank());
  nn::DistributedDataParallel views(a);
  nn::DistributedDataParallel copies(
      b, nn::DistributedDataParallelOptions().gradient_as_bucket_view(false));
  optim::SGD opt_a(a->parameters(), optim::SGDOptions(0.1));
  optim::SGD opt_b(b->parameters(), optim::SGDOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    auto xy = global_batch(4 * pg->size(), 50 + step);
    opt_a.zero_grad();
    opt_b.zero_grad();
    ddp_loss(views, xy).backward();
    ddp_loss(copies, xy).backward();
    for (const auto& p : a->named_parameters()) {
      EXPECT_TRUE(equal(p.value().grad(), b->named_parameters()[p.key()].grad()))
          << "rank " << pg->rank() << ", step " << step << ": " << p.key();
    }
    opt_a.step();
    opt_b.step();
  }
}

// Within each bucket, successive parameters' gradients lie back to back.
void expect_grads_in_buckets(nn::DistributedDataParallel& ddp, const std::string& where) {
  const std::vector<Tensor> params = ddp->module()->parameters();
  for (const auto& bucket : ddp->stats().bucket_indices) {
    for (size_t k = 0; k + 1 < bucket.size(); ++k) {
      const Tensor g0 = params[bucket[k]].grad();
      const Tensor g1 = params[bucket[k + 1]].grad();
      ASSERT_TRUE(g0.defined() && g1.defined()) << where;
      EXPECT_EQ(static_cast<const char*>(g1.data_ptr()),
                static_cast<const char*>(g0.data_ptr()) + g0.nbytes())
          << "rank " << world()->rank() << ", " << where << ": params " << bucket[k]
          << " and " << bucket[k + 1];
    }
  }
}

TEST(DistributedDataParallel, GradientsAreViewsIntoTheirBuckets) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp(pg->rank());
  // ~500 bytes: several buckets of a few parameters.
  nn::DistributedDataParallel ddp(
      local, nn::DistributedDataParallelOptions().bucket_cap_mb(0.0005));
  EXPECT_GE(ddp->stats().bucket_indices.size(), 3u);
  std::vector<void*> pointers;
  for (int step = 0; step < 4; ++step) {
    auto xy = global_batch(2 * pg->size(), 70 + step);
    // Steps 1 and 2 keep the zeroed views (step 1's forward rebuilds the
    // buckets and moves them), step 3 sets them to none.
    ddp->zero_grad(/*set_to_none=*/step == 0 || step == 3);
    ddp_loss(ddp, xy).backward();
    const std::string where = "step " + std::to_string(step);
    expect_grads_in_buckets(ddp, where);
    std::vector<void*> now;
    for (const Tensor& p : local->parameters()) now.push_back(p.grad().data_ptr());
    // From step 1 on (after the rebuild) the buckets stay: zero_grad(false)
    // keeps the views, zero_grad() makes the next backward copy in again.
    if (step >= 2) {
      EXPECT_EQ(now, pointers) << "rank " << pg->rank() << ", " << where;
    }
    pointers = now;
  }
  EXPECT_TRUE(ddp->stats().buckets_rebuilt);
}

TEST(DistributedDataParallel, OverlapOffGivesTheSameGradients) {
  auto pg = world();
  nn::Sequential a = rank_dependent_mlp(pg->rank());
  nn::Sequential b = rank_dependent_mlp(pg->rank());
  const auto options = nn::DistributedDataParallelOptions().bucket_cap_mb(0.0005);
  nn::DistributedDataParallel overlapped(a, options);
  nn::DistributedDataParallel at_end(
      b, nn::DistributedDataParallelOptions(options).overlap(false));
  nn::Sequential reference = replica_of(a);
  for (int step = 0; step < 2; ++step) {
    auto xy = global_batch(4 * pg->size(), 90 + step);
    a->zero_grad();
    b->zero_grad();
    reference->zero_grad();
    ddp_loss(overlapped, xy).backward();
    ddp_loss(at_end, xy).backward();
    mse_loss(reference->forward(xy.first), xy.second).backward();
    expect_grads_close(b, reference, 1.0, 1e-5, 1e-7, "overlap off");
    for (const auto& p : a->named_parameters()) {
      EXPECT_TRUE(equal(p.value().grad(), b->named_parameters()[p.key()].grad()))
          << "rank " << pg->rank() << ", step " << step << ": " << p.key();
    }
  }
}

TEST(DistributedDataParallel, BothZeroGradFlavoursWorkOverSeveralIterations) {
  auto pg = world();
  for (bool as_view : {true, false}) {
    for (bool set_to_none : {true, false}) {
      nn::Sequential local = rank_dependent_mlp(pg->rank());
      nn::DistributedDataParallel ddp(
          local, nn::DistributedDataParallelOptions().gradient_as_bucket_view(as_view));
      nn::Sequential reference = replica_of(local);
      optim::SGD opt(local->parameters(), optim::SGDOptions(0.1));
      optim::SGD ref_opt(reference->parameters(), optim::SGDOptions(0.1));
      for (int step = 0; step < 4; ++step) {
        const std::string where = std::string("view ") + (as_view ? "on" : "off") +
                                  ", set_to_none " + (set_to_none ? "on" : "off") +
                                  ", step " + std::to_string(step);
        auto xy = global_batch(2 * pg->size(), 130 + step);
        opt.zero_grad(set_to_none);
        ref_opt.zero_grad();
        ddp_loss(ddp, xy).backward();
        mse_loss(reference->forward(xy.first), xy.second).backward();
        expect_grads_close(local, reference, 1.0, 1e-5, 1e-6, where);
        opt.step();
        ref_opt.step();
      }
      expect_replicas_equal(local, "zero_grad variants");
    }
  }
}

TEST(DistributedDataParallel, Float64ModelsWork) {
  auto pg = world();
  nn::Sequential local = rank_dependent_mlp(pg->rank());
  local->to(kFloat64);
  nn::DistributedDataParallel ddp(local);
  nn::Sequential reference = replica_of(local);
  for (int step = 0; step < 2; ++step) {
    auto xy = global_batch(4 * pg->size(), 150 + step, kFloat64);
    local->zero_grad();
    reference->zero_grad();
    ddp_loss(ddp, xy).backward();
    mse_loss(reference->forward(xy.first), xy.second).backward();
    for (const auto& p : local->named_parameters()) {
      EXPECT_EQ(p.value().grad().dtype(), kFloat64) << p.key();
    }
    expect_grads_close(local, reference, 1.0, 1e-12, 1e-14, "float64");
  }
}

// Spec §1 item 1: shared parameters are managed once (first name wins).
// Here one Linear is applied twice, so it appears twice in
// named_parameters(); its gradient must still be averaged exactly once.
TEST(DistributedDataParallel, SharedParametersAreReducedOnce) {
  auto pg = world();
  for (bool as_view : {true, false}) {
    manual_seed(170 + pg->rank());
    nn::Linear fc(10, 10);
    nn::Sequential local(fc, nn::Tanh(), fc);
    nn::DistributedDataParallel ddp(
        local, nn::DistributedDataParallelOptions().gradient_as_bucket_view(as_view));
    size_t managed = 0;
    for (const auto& bucket : ddp->stats().bucket_indices) managed += bucket.size();
    EXPECT_EQ(managed, 2u) << "fc.weight and fc.bias, once each";
    nn::Linear ref_fc(10, 10);
    {
      NoGradGuard no_grad;
      ref_fc->weight.copy_(fc->weight);
      ref_fc->bias.copy_(fc->bias);
    }
    nn::Sequential reference(ref_fc, nn::Tanh(), ref_fc);
    Generator g(171);
    const Tensor x = randn({2 * pg->size(), 10}, g);
    square(ddp->forward(share(x, pg->rank(), pg->size()))).mean().backward();
    square(reference->forward(x)).mean().backward();
    for (const char* name : {"weight", "bias"}) {
      const Tensor got = fc->named_parameters()[name].grad();
      ASSERT_TRUE(got.defined()) << name;
      EXPECT_TRUE(all_close(got, ref_fc->named_parameters()[name].grad(), 1e-5, 1e-7))
          << "rank " << pg->rank() << ", view " << as_view << ": fc." << name;
    }
  }
}

// A parameter whose local gradient is exactly 7 everywhere, on every rank.
struct ScaleImpl : nn::Module {
  ScaleImpl() { w = register_parameter("w", ones({4})); }
  Tensor forward(const Tensor& x) { return w * x; }
  Tensor w;
};

// §3 "Division summary" and this class's header: each rank multiplies its
// gradient by 1/W while copying it into the bucket, then the buckets are
// summed. 7 * fl(1/3) summed three times is 7.0000005f, not 7 (x/3 and
// x*(1/3) differ in the last bit); with 1 or 2 ranks both orders agree.
TEST(DistributedDataParallel, AveragingScalesEachRanksGradientBeforeSumming) {
  auto pg = world();
  auto model = std::make_shared<ScaleImpl>();
  nn::DistributedDataParallel ddp(
      model, nn::DistributedDataParallelOptions().gradient_as_bucket_view(false));
  ddp->forward(full({4}, 7.0)).sum().backward();
  const float part = 7.0f * (1.0f / static_cast<float>(pg->size()));
  float want = 0.0f;
  for (int r = 0; r < pg->size(); ++r) want += part;
  const Tensor grad = model->w.grad();
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(grad.data_ptr<float>()[i], want)
        << "rank " << pg->rank() << ", element " << i;
  }
}

}  // namespace
}  // namespace tandem::distributed
