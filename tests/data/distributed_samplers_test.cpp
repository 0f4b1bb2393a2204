// LibTorch's distributed samplers: LibTorch's own orders (golden values),
// then the properties that hold with any standard library (each replica's
// share, disjoint blocks, coverage, duplicates), the epoch that only
// set_epoch changes, and the loader over them.
#include "tandem/data/distributed_samplers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "data/test_datasets.h"
#include "support/tensor_testing.h"
#include "tandem/data/data_loader.h"

namespace tandem::data::samplers {
namespace {

using tandem::testing::throws_with;

using Indices = std::vector<size_t>;

// Every index of a pass, through LibTorch's stepping interface.
Indices drain(Sampler& sampler, size_t batch_size) {
  Indices all;
  while (auto batch = sampler.next(batch_size)) {
    EXPECT_LE(batch->size(), batch_size);
    all.insert(all.end(), batch->begin(), batch->end());
  }
  return all;
}

// How often each index occurs in the blocks of all `replicas`.
template <typename MakeSampler>
std::map<size_t, size_t> counts_over_replicas(size_t replicas,
                                              size_t epoch,
                                              const MakeSampler& make) {
  std::map<size_t, size_t> counts;
  for (size_t rank = 0; rank < replicas; ++rank) {
    for (size_t index : make(rank).indices(epoch)) ++counts[index];
  }
  return counts;
}

// ---- LibTorch's own orders ----

struct GoldenCase {
  size_t size, num_replicas, rank, epoch;
  bool allow_duplicates;
  Indices random, sequential;
};

// Printed by tests/reference/libtorch_distributed_samplers.py, which runs
// LibTorch 1.13's DistributedRandomSampler and DistributedSequentialSampler
// (Debian's libtorch_cpu.so, built with GCC 12's libstdc++).
const std::vector<GoldenCase>& golden_cases() {
  static const std::vector<GoldenCase> cases = {
      {10, 3, 0, 0, true, {0, 2, 1, 5}, {0, 1, 2, 3}},
      {10, 3, 1, 0, true, {9, 1, 4, 7}, {4, 5, 6, 7}},
      {10, 3, 2, 0, true, {6, 0, 3, 8}, {8, 9, 0, 1}},
      {10, 3, 0, 0, false, {2, 4, 6}, {0, 1, 2}},
      {10, 3, 1, 0, false, {0, 5, 1}, {3, 4, 5}},
      {10, 3, 2, 0, false, {8, 3, 7}, {6, 7, 8}},
      {10, 3, 2, 7, true, {4, 1, 0, 9}, {8, 9, 0, 1}},
      {10, 1, 0, 0, true, {0, 2, 1, 5, 9, 8, 4, 7, 6, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {10,
       1,
       0,
       5,
       false,
       {3, 8, 5, 2, 4, 6, 7, 1, 9, 0},
       {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
      {7, 4, 3, 2, true, {6, 2}, {6, 0}},
      {20, 3, 1, 1, false, {6, 3, 17, 8, 0, 7}, {6, 7, 8, 9, 10, 11}},
      {25, 4, 1, 9, true, {17, 0, 8, 24, 15, 0, 3}, {7, 8, 9, 10, 11, 12, 13}},
  };
  return cases;
}

TEST(DistributedSequentialSamplerTest, GivesLibTorchsBlocks) {
  for (const GoldenCase& c : golden_cases()) {
    SCOPED_TRACE(::testing::Message()
                 << "size " << c.size << ", rank " << c.rank << " of " << c.num_replicas);
    DistributedSequentialSampler sampler(
        c.size, c.num_replicas, c.rank, c.allow_duplicates);
    EXPECT_EQ(sampler.indices(c.epoch), c.sequential);
    EXPECT_EQ(drain(sampler, 3), c.sequential);
  }
}

TEST(DistributedRandomSamplerTest, GivesLibTorchsOrderWithTheSameStandardLibrary) {
#if !defined(__GLIBCXX__)
  GTEST_SKIP() << "std::shuffle is libstdc++'s in the golden values; this "
                  "standard library shuffles otherwise (see Note [LibTorch's "
                  "distributed split])";
#endif
  for (const GoldenCase& c : golden_cases()) {
    SCOPED_TRACE(::testing::Message()
                 << "size " << c.size << ", rank " << c.rank << " of " << c.num_replicas
                 << ", epoch " << c.epoch);
    DistributedRandomSampler sampler(c.size, c.num_replicas, c.rank, c.allow_duplicates);
    EXPECT_EQ(sampler.indices(c.epoch), c.random);
    sampler.set_epoch(c.epoch);  // as the generator did, stepping
    sampler.reset();
    EXPECT_EQ(drain(sampler, 2), c.random);
  }
}

// ---- properties with any standard library ----

TEST(DistributedRandomSamplerTest, BlocksAreDisjointAndCoverAllButTheLastIndices) {
  // Without duplicates: floor(size / R) each, and the size % R highest
  // indices left out in every epoch (LibTorch cuts before shuffling).
  for (auto [size, replicas] : {std::pair<size_t, size_t>{103, 4}, {100, 4}, {5, 7}}) {
    for (size_t epoch : {0, 3}) {
      const auto counts = counts_over_replicas(replicas, epoch, [&](size_t rank) {
        return DistributedRandomSampler(size, replicas, rank, false);
      });
      const size_t kept = size / replicas * replicas;
      EXPECT_EQ(counts.size(), kept);
      for (auto [index, count] : counts) {
        EXPECT_LT(index, kept);
        EXPECT_EQ(count, 1u) << "index " << index;
      }
    }
  }
  EXPECT_EQ(DistributedRandomSampler(103, 4, 3, false).num_samples(), 25u);
}

TEST(DistributedRandomSamplerTest, DuplicatesPadTheFirstIndices) {
  // With duplicates: ceil(size / R) each; every index once, and the
  // local * R - size first ones once more.
  for (auto [size, replicas] : {std::pair<size_t, size_t>{103, 4}, {25, 4}, {2, 5}}) {
    const size_t local = (size + replicas - 1) / replicas;
    const auto counts = counts_over_replicas(replicas, 1, [&](size_t rank) {
      return DistributedRandomSampler(size, replicas, rank);
    });
    const size_t padding = local * replicas - size;
    ASSERT_EQ(counts.size(), size);  // every index, none past the end
    for (auto [index, count] : counts) {
      // 2 examples on 5 replicas pad with 3 indices: 0, 1, 0 (LibTorch's
      // padding would give index 2 of 2 here).
      const size_t expected = 1 + padding / size + (index < padding % size ? 1 : 0);
      EXPECT_EQ(count, expected) << "index " << index << ", size " << size;
    }
  }
}

TEST(DistributedRandomSamplerTest, EveryReplicaShufflesAlike) {
  // One replica sees the whole shuffled list; R replicas see its blocks.
  const Indices whole = DistributedRandomSampler(12, 1, 0).indices(4);
  Indices blocks;
  for (size_t rank = 0; rank < 3; ++rank) {
    const Indices mine = DistributedRandomSampler(12, 3, rank).indices(4);
    blocks.insert(blocks.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(blocks, whole);
  EXPECT_NE(whole, DistributedRandomSampler(12, 1, 0).indices(5));
  Indices sorted = whole;
  std::sort(sorted.begin(), sorted.end());
  Indices range(12);
  std::iota(range.begin(), range.end(), size_t{0});
  EXPECT_EQ(sorted, range);
}

TEST(DistributedSequentialSamplerTest, WrapsToTheStartToPad) {
  EXPECT_EQ(DistributedSequentialSampler(5, 2, 1).indices(0), Indices({3, 4, 0}));
  EXPECT_EQ(DistributedSequentialSampler(5, 2, 1, false).indices(0), Indices({2, 3}));
  EXPECT_EQ(DistributedSequentialSampler(2, 5, 4).indices(0), Indices({0}));
  EXPECT_EQ(DistributedSequentialSampler(5, 2, 1).indices(9),
            DistributedSequentialSampler(5, 2, 1).indices(0));
  EXPECT_TRUE(DistributedSequentialSampler(0, 3, 2).indices(0).empty());
}

// ---- the epoch, and LibTorch's stepping ----

TEST(DistributedRandomSamplerTest, ResetKeepsTheEpochUntilSetEpoch) {
  DistributedRandomSampler sampler(50, 2, 1);
  const Indices first = drain(sampler, 7);
  EXPECT_EQ(first, sampler.indices(0));
  sampler.reset();
  EXPECT_EQ(drain(sampler, 7), first);  // LibTorch: the same order again
  EXPECT_EQ(sampler.epoch(), 0u);
  sampler.set_epoch(3);
  sampler.reset();
  EXPECT_EQ(sampler.epoch(), 3u);
  EXPECT_EQ(drain(sampler, 50), sampler.indices(3));
  EXPECT_NE(sampler.indices(3), first);
  sampler.reset(/*new_size=*/10);  // a new size, the same epoch
  EXPECT_EQ(sampler.num_samples(), 5u);
  EXPECT_EQ(drain(sampler, 2), DistributedRandomSampler(10, 2, 1).indices(3));
}

TEST(DistributedSamplersTest, InvalidRankOrReplicasAreRefused) {
  EXPECT_TRUE(throws_with([] { DistributedRandomSampler(10, 2, 2); },
                          "DistributedRandomSampler: rank 2 is outside [0, 2)"));
  EXPECT_TRUE(throws_with([] { DistributedSequentialSampler(10, 0); },
                          "DistributedSequentialSampler: num_replicas must be positive"));
}

// ---- the loader over them ----

TEST(DistributedSamplersTest, LoaderPassesRepeatTheSetEpochsOrder) {
  using data_testing::counting_tensors;
  DistributedRandomSampler sampler(20, 2, 0, false);
  auto loader = make_data_loader(counting_tensors(20), sampler, /*batch_size=*/4);
  EXPECT_EQ(loader->num_batches(), 3);
  auto targets_of_a_pass = [&] {
    Indices seen;
    for (auto& batch : *loader) {
      for (int64_t i = 0; i < batch.target.size(0); ++i) {
        seen.push_back(static_cast<size_t>(batch.target[i].item<int64_t>()));
      }
    }
    return seen;
  };
  EXPECT_EQ(targets_of_a_pass(), sampler.indices(0));
  EXPECT_EQ(targets_of_a_pass(), sampler.indices(0));
  Indices epoch_two;
  for (const Batch& batch : loader->epoch(2)) {
    for (int64_t i = 0; i < batch.target.size(0); ++i) {
      epoch_two.push_back(static_cast<size_t>(batch.target[i].item<int64_t>()));
    }
  }
  EXPECT_EQ(epoch_two, sampler.indices(2));
  auto sequential = make_data_loader<DistributedSequentialSampler>(
      counting_tensors(6), DataLoaderOptions().batch_size(4));
  EXPECT_EQ(sequential->num_examples(), 6);  // one replica: every example
}

}  // namespace
}  // namespace tandem::data::samplers
