// Samplers: orders that are permutations, fixed by (seed, epoch); LibTorch's
// reset/next stepping; distributed shards that are disjoint and cover the
// data, with their padding reported.
#include "tandem/data/sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "support/tensor_testing.h"

namespace tandem::data::samplers {
namespace {

using tandem::testing::throws_with;

bool is_permutation_of_range(std::vector<size_t> order, size_t n) {
  std::vector<size_t> range(n);
  std::iota(range.begin(), range.end(), size_t{0});
  std::sort(order.begin(), order.end());
  return order == range;
}

TEST(SamplerTest, SequentialIsTheIdentityInEveryEpoch) {
  SequentialSampler sampler(5);
  EXPECT_EQ(sampler.indices(0), std::vector<size_t>({0, 1, 2, 3, 4}));
  EXPECT_EQ(sampler.indices(7), sampler.indices(0));
  EXPECT_EQ(sampler.num_samples(), 5u);
}

TEST(SamplerTest, PermutationIsFixedOnEveryPlatform) {
  // Golden values: the permutation is defined by SplitMix64 and
  // Fisher-Yates alone (a Python transcription gives the same lists).
  EXPECT_EQ(detail::permutation(10, 0, 0),
            std::vector<size_t>({0, 1, 4, 6, 3, 9, 8, 7, 2, 5}));
  EXPECT_EQ(detail::permutation(10, 0, 1),
            std::vector<size_t>({4, 2, 1, 3, 7, 9, 5, 0, 6, 8}));
  EXPECT_EQ(detail::permutation(10, 42, 0),
            std::vector<size_t>({9, 4, 2, 8, 1, 3, 0, 6, 5, 7}));
  EXPECT_TRUE(detail::permutation(0, 1, 2).empty());
  EXPECT_EQ(detail::permutation(1, 1, 2), std::vector<size_t>({0}));
}

TEST(SamplerTest, RandomOrderIsAPureFunctionOfSeedAndEpoch) {
  RandomSampler a(1000, 42);
  RandomSampler b(1000, 42);
  for (size_t epoch : {0, 1, 5}) {
    EXPECT_TRUE(is_permutation_of_range(a.indices(epoch), 1000));
    EXPECT_EQ(a.indices(epoch), b.indices(epoch));
    EXPECT_EQ(a.indices(epoch), a.indices(epoch));
  }
  EXPECT_NE(a.indices(0), a.indices(1));
  EXPECT_NE(a.indices(0), RandomSampler(1000, 43).indices(0));
}

TEST(SamplerTest, RandomSeedComesFromAGenerator) {
  Generator g1(7);
  Generator g2(7);
  EXPECT_EQ(RandomSampler(100, g1).indices(0), RandomSampler(100, g2).indices(0));
  manual_seed(3);
  const std::vector<size_t> first = RandomSampler(100).indices(0);
  manual_seed(3);
  EXPECT_EQ(RandomSampler(100).indices(0), first);
}

// All indices one LibTorch-style pass hands out, `batch` at a time.
std::vector<size_t> drain(Sampler& sampler, size_t batch) {
  std::vector<size_t> all;
  while (auto next = sampler.next(batch)) {
    EXPECT_LE(next->size(), batch);
    all.insert(all.end(), next->begin(), next->end());
  }
  return all;
}

TEST(SamplerTest, ResetStartsTheNextEpochUnlessOneWasSet) {
  RandomSampler sampler(50, 9);
  EXPECT_EQ(sampler.epoch(), 0u);
  sampler.reset();
  EXPECT_EQ(drain(sampler, 8), sampler.indices(0));
  sampler.reset();
  EXPECT_EQ(sampler.epoch(), 1u);
  EXPECT_EQ(drain(sampler, 8), sampler.indices(1));
  sampler.set_epoch(5);
  sampler.reset();
  EXPECT_EQ(sampler.epoch(), 5u);
  EXPECT_EQ(drain(sampler, 50), sampler.indices(5));
  EXPECT_FALSE(sampler.next(1).has_value());
  sampler.reset(/*new_size=*/20);
  EXPECT_EQ(sampler.epoch(), 6u);
  EXPECT_TRUE(is_permutation_of_range(drain(sampler, 3), 20));
}

TEST(SamplerTest, NextBeforeResetStartsEpochZero) {
  SequentialSampler sampler(3);
  EXPECT_EQ(sampler.next(2), std::vector<size_t>({0, 1}));
  EXPECT_EQ(sampler.next(2), std::vector<size_t>({2}));
  EXPECT_FALSE(sampler.next(2).has_value());
  EXPECT_TRUE(throws_with([&] { sampler.next(0); }, "batch_size must be positive"));
}

// ---- distributed ----

struct Shards {
  std::vector<std::vector<size_t>> per_rank;
  std::vector<size_t> padded;
};

Shards shards(size_t n, size_t replicas, bool shuffle, bool drop_last, size_t epoch) {
  Shards out;
  for (size_t rank = 0; rank < replicas; ++rank) {
    DistributedSampler sampler(n, replicas, rank, shuffle, /*seed=*/11, drop_last);
    out.per_rank.push_back(sampler.indices(epoch));
    out.padded.push_back(sampler.padded());
    EXPECT_EQ(out.per_rank.back().size(), sampler.num_samples());
  }
  return out;
}

TEST(DistributedSamplerTest, ShardsAreDisjointAndCoverTheDataWithPaddingReported) {
  for (size_t n : {0, 1, 3, 10, 11, 12, 97}) {
    for (size_t replicas : {1, 3, 4}) {
      for (bool shuffle : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << "n=" << n << " replicas=" << replicas << " shuffle=" << shuffle);
        const Shards s = shards(n, replicas, shuffle, /*drop_last=*/false, /*epoch=*/2);
        std::vector<size_t> real;  // each shard without its reported padding
        size_t total_padding = 0;
        for (size_t r = 0; r < replicas; ++r) {
          EXPECT_EQ(s.per_rank[r].size(), s.per_rank[0].size()) << "equal shard sizes";
          real.insert(
              real.end(), s.per_rank[r].begin(), s.per_rank[r].end() - s.padded[r]);
          total_padding += s.padded[r];
        }
        EXPECT_TRUE(is_permutation_of_range(real, n)) << "every sample exactly once";
        EXPECT_EQ(total_padding, s.per_rank[0].size() * replicas - n);
      }
    }
  }
}

TEST(DistributedSamplerTest, DropLastLeavesOutTheUnevenTail) {
  for (size_t n : {10, 11, 12}) {
    const Shards s = shards(n, 4, /*shuffle=*/true, /*drop_last=*/true, 0);
    std::set<size_t> seen;
    for (size_t r = 0; r < 4; ++r) {
      EXPECT_EQ(s.per_rank[r].size(), n / 4);
      EXPECT_EQ(s.padded[r], 0u);
      seen.insert(s.per_rank[r].begin(), s.per_rank[r].end());
    }
    EXPECT_EQ(seen.size(), (n / 4) * 4) << "disjoint";
  }
}

TEST(DistributedSamplerTest, FollowsPyTorchsRoundRobinWithoutShuffle) {
  // PyTorch: indices [0..9] padded with [0, 1] to 12, rank r takes r::4.
  EXPECT_EQ(DistributedSampler(10, 4, 1, /*shuffle=*/false).indices(0),
            std::vector<size_t>({1, 5, 9}));
  DistributedSampler rank3(10, 4, 3, /*shuffle=*/false);
  EXPECT_EQ(rank3.indices(0), std::vector<size_t>({3, 7, 1}));
  EXPECT_EQ(rank3.padded(), 1u);
  EXPECT_EQ(DistributedSampler(10, 4, 1, false).padded(), 0u);
}

TEST(DistributedSamplerTest, ShuffleIsAPureFunctionOfSeedAndEpoch) {
  DistributedSampler a(100, 2, 1, true, 5);
  DistributedSampler b(100, 2, 1, true, 5);
  EXPECT_EQ(a.indices(3), b.indices(3));
  EXPECT_NE(a.indices(3), a.indices(4));
  // Stepping through epochs with set_epoch, as PyTorch programs do.
  a.set_epoch(4);
  a.reset();
  EXPECT_EQ(drain(a, 7), b.indices(4));
}

TEST(DistributedSamplerTest, InvalidRankOrReplicasAreRefused) {
  EXPECT_TRUE(
      throws_with([] { DistributedSampler(10, 4, 4); }, "rank 4 is outside [0, 4)"));
  EXPECT_TRUE(
      throws_with([] { DistributedSampler(10, 0, 0); }, "num_replicas must be positive"));
}

}  // namespace
}  // namespace tandem::data::samplers
