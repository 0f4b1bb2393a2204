// DistributedDataParallel's buckets (spec/distributed.md §2, §12 cases
// 12-14 and 16, §13 item 3): compute_bucket_assignment_by_size as a pure
// function, the buckets a model gets at construction (reverse registration
// order) and after the one rebuild (rank 0's grad-ready order), the same on
// every rank; no rebuild with find_unused_parameters; gradients still right
// with several buckets and with float32 and float64 parameters side by side.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distributed_testing.h"
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem::distributed {
namespace {

using tandem::testing::all_close;
using tandem::testing::throws_with;
using testing::flatten_buckets;
using testing::root_values;
using testing::share;
using testing::world;
using Buckets = std::vector<std::vector<size_t>>;

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kTensorBytes = 409600;  // 102,400 float32 elements

std::vector<Tensor> float32s(size_t n) {
  return std::vector<Tensor>(n, empty({102400}, kFloat32));
}

TEST(DdpBucketAssignment, OvershootsByOneTensorAndSortsBySmallestIndex) {
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(4), {kMiB}),
            (Buckets{{0, 1, 2}, {3}}));
  // A tensor larger than the limit closes the bucket it lands in.
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(3), {1000}),
            (Buckets{{0}, {1}, {2}}));
  // One limit larger than everything: one bucket.
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(3), {100 * kMiB}),
            (Buckets{{0, 1, 2}}));
}

TEST(DdpBucketAssignment, DtypesNeverMix) {
  const Tensor f32 = empty({102400}, kFloat32);
  const Tensor f64 = empty({51200}, kFloat64);  // the same 409,600 bytes
  const std::vector<Tensor> tensors{f32, f64, f32, f64, f32};
  EXPECT_EQ(compute_bucket_assignment_by_size(tensors, {kMiB}),
            (Buckets{{0, 2, 4}, {1, 3}}));
  EXPECT_EQ(compute_bucket_assignment_by_size(tensors, {100 * kMiB}),
            (Buckets{{0, 2, 4}, {1, 3}}));
  // Each dtype has its own position in the limits list.
  EXPECT_EQ(compute_bucket_assignment_by_size(tensors, {kTensorBytes, kMiB}),
            (Buckets{{0}, {1}, {2, 4}, {3}}));
}

TEST(DdpBucketAssignment, LimitsAdvanceAndTheLastOneRepeats) {
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(6), {kTensorBytes, kMiB}),
            (Buckets{{0}, {1, 2, 3}, {4, 5}}));
  EXPECT_EQ(
      compute_bucket_assignment_by_size(float32s(6), {kTensorBytes, 2 * kTensorBytes}),
      (Buckets{{0}, {1, 2}, {3, 4}, {5}}));
}

TEST(DdpBucketAssignment, AnExplicitOrderKeepsClosingOrderWithOpenBucketsLast) {
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(4), {kMiB}, {3, 2, 1, 0}),
            (Buckets{{3, 2, 1}, {0}}));
  EXPECT_EQ(compute_bucket_assignment_by_size(float32s(4), {kMiB}, {2, 0, 3, 1}),
            (Buckets{{2, 0, 3}, {1}}));
  // The float64 bucket holds the smallest index but never closes: last.
  const std::vector<Tensor> tensors{empty({1}, kFloat64),
                                    empty({102400}, kFloat32),
                                    empty({102400}, kFloat32),
                                    empty({102400}, kFloat32)};
  EXPECT_EQ(compute_bucket_assignment_by_size(tensors, {kMiB}, {0, 1, 2, 3}),
            (Buckets{{1, 2, 3}, {0}}));
  EXPECT_EQ(compute_bucket_assignment_by_size(tensors, {kMiB}),
            (Buckets{{0}, {1, 2, 3}}));
}

TEST(DdpBucketAssignment, BadArgumentsAreErrors) {
  const char* name = "compute_bucket_assignment_by_size";
  EXPECT_TRUE(throws_with(
      [&] {
        compute_bucket_assignment_by_size(float32s(3), {kMiB}, {0, 1});
      },
      name));
  EXPECT_TRUE(throws_with(
      [&] {
        compute_bucket_assignment_by_size(float32s(3), {kMiB}, {0, 1, 1});
      },
      name));
  EXPECT_TRUE(throws_with(
      [&] {
        compute_bucket_assignment_by_size(float32s(3), {kMiB}, {0, 1, 3});
      },
      name));
  EXPECT_TRUE(
      throws_with([&] { compute_bucket_assignment_by_size(float32s(3), {}); }, name));
  EXPECT_TRUE(
      throws_with([&] { compute_bucket_assignment_by_size({Tensor()}, {kMiB}); }, name));
}

// Four bias-free Linear(320, 320), 409,600 bytes of weight each, applied in
// registration order, so their gradients become ready in order 3, 2, 1, 0.
nn::Sequential make_tower(int rank) {
  manual_seed(40 + rank);
  auto layer = [] { return nn::Linear(nn::LinearOptions(320, 320).bias(false)); };
  return nn::Sequential(layer(), layer(), layer(), layer());
}

nn::Sequential replica_of(const nn::Sequential& model) {
  nn::Sequential copy = make_tower(0);
  NoGradGuard no_grad;
  for (const auto& p : copy->named_parameters()) {
    Tensor(p.value()).copy_(model->named_parameters()[p.key()]);
  }
  return copy;
}

// One synchronized iteration on this rank's share of a global batch, and
// the one-process reference on all of it; the gradients must agree.
void iterate_and_check(nn::DistributedDataParallel& ddp,
                       nn::Sequential local,
                       nn::Sequential reference,
                       uint64_t seed,
                       const std::string& where) {
  auto pg = world();
  Generator g(seed);
  const Tensor x = randn({2 * pg->size(), 320}, g);
  local->zero_grad();
  reference->zero_grad();
  square(ddp->forward(share(x, pg->rank(), pg->size()))).mean().backward();
  square(reference->forward(x)).mean().backward();
  for (const auto& p : reference->named_parameters()) {
    EXPECT_TRUE(all_close(
        local->named_parameters()[p.key()].grad(), p.value().grad(), 1e-5, 1e-8))
        << "rank " << pg->rank() << ", " << where << ": " << p.key();
  }
}

// `stats` holds `want` here and on rank 0 (a collective).
void expect_buckets(const nn::DistributedDataParallelStats& stats,
                    const Buckets& want,
                    const std::string& where) {
  const int rank = world()->rank();
  EXPECT_EQ(stats.bucket_indices, want) << "rank " << rank << ", " << where;
  const std::vector<int64_t> mine = flatten_buckets(stats.bucket_indices);
  EXPECT_EQ(root_values(world(), mine), mine) << "rank " << rank << ", " << where;
}

TEST(DdpBuckets, DefaultBucketsAreRebuiltOnceInGradReadyOrder) {
  auto pg = world();
  nn::Sequential local = make_tower(pg->rank());
  nn::DistributedDataParallel ddp(local);
  nn::Sequential reference = replica_of(local);
  auto stats = ddp->stats();
  // Registration order, closing at 1 MiB, then reversed.
  expect_buckets(stats, {{3}, {0, 1, 2}}, "at construction");
  EXPECT_EQ(stats.bucket_bytes, (std::vector<int64_t>{409600, 1228800}));
  EXPECT_FALSE(stats.buckets_rebuilt);
  EXPECT_EQ(stats.synchronized_backwards, 0);

  iterate_and_check(ddp, local, reference, 1, "iteration 1");
  stats = ddp->stats();
  EXPECT_EQ(stats.grad_ready_order, (std::vector<size_t>{3, 2, 1, 0}));
  std::vector<int64_t> order(stats.grad_ready_order.begin(),
                             stats.grad_ready_order.end());
  EXPECT_EQ(root_values(pg, order), order) << "rank " << pg->rank();
  EXPECT_FALSE(stats.buckets_rebuilt) << "rebuilt before the next forward";
  EXPECT_EQ(stats.synchronized_backwards, 1);

  // A forward without gradients does not rebuild.
  {
    NoGradGuard no_grad;
    ddp->forward(zeros({1, 320}));
  }
  EXPECT_FALSE(ddp->stats().buckets_rebuilt);

  for (int i = 2; i <= 4; ++i) {
    iterate_and_check(ddp, local, reference, i, "iteration " + std::to_string(i));
    stats = ddp->stats();
    expect_buckets(stats, {{3, 2, 1}, {0}}, "after iteration " + std::to_string(i));
    EXPECT_EQ(stats.bucket_bytes, (std::vector<int64_t>{1228800, 409600}));
    EXPECT_TRUE(stats.buckets_rebuilt);
    EXPECT_EQ(stats.grad_ready_order, (std::vector<size_t>{3, 2, 1, 0}));
    EXPECT_EQ(stats.synchronized_backwards, i);
  }
}

// What a resumed run does: the first run's grad-ready order, given at
// construction, makes the buckets the rebuilt ones from the first backward,
// and nothing is reassigned later.
TEST(DdpBuckets, AGivenGradReadyOrderBucketsByItFromTheStart) {
  auto pg = world();
  nn::Sequential local = make_tower(pg->rank());
  nn::DistributedDataParallel ddp(
      local, nn::DistributedDataParallelOptions().grad_ready_order({3, 2, 1, 0}));
  nn::Sequential reference = replica_of(local);
  expect_buckets(ddp->stats(), {{3, 2, 1}, {0}}, "at construction");
  for (int i = 1; i <= 2; ++i) {
    iterate_and_check(ddp, local, reference, i, "iteration " + std::to_string(i));
    const auto stats = ddp->stats();
    expect_buckets(stats, {{3, 2, 1}, {0}}, "after iteration " + std::to_string(i));
    EXPECT_EQ(stats.grad_ready_order, (std::vector<size_t>{3, 2, 1, 0}));
  }
}

TEST(DdpBuckets, AGradReadyOrderThatIsNoPermutationIsAnError) {
  EXPECT_TRUE(throws_with(
      [&] {
        nn::DistributedDataParallel(
            make_tower(world()->rank()),
            nn::DistributedDataParallelOptions().grad_ready_order({1, 0}));
      },
      "grad_ready_order has 2 entries for 4 managed parameters"));
  EXPECT_TRUE(throws_with(
      [&] {
        nn::DistributedDataParallel(
            make_tower(world()->rank()),
            nn::DistributedDataParallelOptions().grad_ready_order({0, 1, 1, 3}));
      },
      "compute_bucket_assignment_by_size"));
}

TEST(DdpBuckets, ASmallCapGivesSeveralBucketsAndRightGradients) {
  auto pg = world();
  struct Case {
    double cap_mb;
    Buckets initial, rebuilt;
  };
  for (const Case& c : {Case{0.4, {{2, 3}, {0, 1}}, {{3, 2}, {1, 0}}},
                        Case{0.3, {{3}, {2}, {1}, {0}}, {{3}, {2}, {1}, {0}}}}) {
    const std::string where = "bucket_cap_mb " + std::to_string(c.cap_mb);
    nn::Sequential local = make_tower(pg->rank());
    nn::DistributedDataParallel ddp(
        local, nn::DistributedDataParallelOptions().bucket_cap_mb(c.cap_mb));
    nn::Sequential reference = replica_of(local);
    expect_buckets(ddp->stats(), c.initial, where + ", at construction");
    for (int i = 1; i <= 3; ++i) {
      iterate_and_check(
          ddp, local, reference, 10 + i, where + ", iteration " + std::to_string(i));
    }
    expect_buckets(ddp->stats(), c.rebuilt, where + ", after 3 iterations");
    EXPECT_TRUE(ddp->stats().buckets_rebuilt) << where;
  }
}

TEST(DdpBuckets, FindUnusedParametersNeverRebuilds) {
  auto pg = world();
  nn::Sequential local = make_tower(pg->rank());
  nn::DistributedDataParallel ddp(
      local,
      nn::DistributedDataParallelOptions().find_unused_parameters(true).bucket_cap_mb(1));
  nn::Sequential reference = replica_of(local);
  expect_buckets(ddp->stats(), {{3}, {0, 1, 2}}, "at construction");
  int warnings = 0;
  auto previous = set_warning_handler([&](const std::string& message) {
    if (message.find("find_unused_parameters") != std::string::npos) ++warnings;
  });
  for (int i = 1; i <= 3; ++i) {
    iterate_and_check(ddp, local, reference, 20 + i, "iteration " + std::to_string(i));
    expect_buckets(
        ddp->stats(), {{3}, {0, 1, 2}}, "after iteration " + std::to_string(i));
    EXPECT_FALSE(ddp->stats().buckets_rebuilt);
  }
  set_warning_handler(previous);
  // Everything was used: the "no unused parameters" warning, at most once
  // (once per process: an earlier test may have shown it).
  EXPECT_LE(warnings, 1) << "rank " << pg->rank();
}

// A float32 weight and a float64 scale: two dtypes, two buckets.
struct MixedImpl : nn::Module {
  MixedImpl() {
    w = register_parameter("w", randn({8, 8}));
    s = register_parameter("s", randn({8}, kFloat64));
    v = register_parameter("v", randn({8, 8}));
  }
  Tensor forward(const Tensor& x) { return x.matmul(w).matmul(v).to(kFloat64) * s; }
  Tensor w, s, v;
};

TEST(DdpBuckets, Float32AndFloat64ParametersGetSeparateBuckets) {
  auto pg = world();
  manual_seed(60 + pg->rank());
  auto local = std::make_shared<MixedImpl>();
  nn::DistributedDataParallel ddp(local);
  manual_seed(0);
  auto reference = std::make_shared<MixedImpl>();
  {
    NoGradGuard no_grad;
    reference->w.copy_(local->w);
    reference->s.copy_(local->s);
    reference->v.copy_(local->v);
  }
  const std::vector<Tensor> params = local->parameters();
  for (int i = 1; i <= 3; ++i) {
    for (const auto& bucket : ddp->stats().bucket_indices) {
      for (size_t index : bucket) {
        EXPECT_EQ(params[index].dtype(), params[bucket.front()].dtype())
            << "iteration " << i << ": a bucket mixes dtypes";
      }
    }
    Generator g(80 + i);
    const Tensor x = randn({2 * pg->size(), 8}, g);
    local->zero_grad();
    reference->zero_grad();
    square(ddp->forward(share(x, pg->rank(), pg->size()))).mean().backward();
    square(reference->forward(x)).mean().backward();
    for (const char* name : {"w", "s", "v"}) {
      EXPECT_TRUE(all_close(local->named_parameters()[name].grad(),
                            reference->named_parameters()[name].grad(),
                            1e-5,
                            1e-7))
          << "rank " << pg->rank() << ", iteration " << i << ": " << name;
    }
  }
  EXPECT_EQ(ddp->stats().bucket_indices.size(), 2u);
}

}  // namespace
}  // namespace tandem::distributed
