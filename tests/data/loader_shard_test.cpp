// The Loader's shard option: the shards' parts of each batch, in order, are
// the unsharded batch (shuffled, dividing or not, drop_last, workers,
// resumed, with a sampler of one's own, any dataset type); part sizes as
// torch.tensor_split; global_size; shards of 0 rows; a shard reads only its
// own examples; bad shards are refused.
#include <gtest/gtest.h>

#include <set>

#include "data/test_datasets.h"
#include "support/tensor_testing.h"
#include "tandem/data/loader.h"
#include "tandem/ops/shape.h"

namespace tandem::data {
namespace {

using data_testing::counting_tensors;
using data_testing::CountingDataset;
using data_testing::Probe;
using tandem::testing::all_close;
using tandem::testing::throws_with;

std::vector<Batch> collect(Loader::EpochRange range) {
  std::vector<Batch> batches;
  for (const Batch& batch : range) batches.push_back(batch);
  return batches;
}

// The shards' batches: shards[s][b] is batch b of shard s of `count`.
template <typename Dataset>
std::vector<std::vector<Batch>> sharded_epoch(const Dataset& dataset,
                                              LoaderOptions options,
                                              int64_t count,
                                              int64_t epoch,
                                              int64_t start_batch = 0) {
  std::vector<std::vector<Batch>> shards;
  for (int64_t s = 0; s < count; ++s) {
    Loader loader(dataset, options.shard(s, count));
    EXPECT_EQ(loader.options().shard_index(), s);
    EXPECT_EQ(loader.options().shard_count(), count);
    shards.push_back(collect(loader.epoch(epoch, start_batch)));
  }
  return shards;
}

// Checks that the shards' parts of each batch, concatenated in shard order,
// are `want`'s batch, with sizes as torch.tensor_split and global_size set.
void expect_shards_make(const std::vector<std::vector<Batch>>& shards,
                        const std::vector<Batch>& want) {
  const auto count = static_cast<int64_t>(shards.size());
  for (const std::vector<Batch>& shard : shards) ASSERT_EQ(shard.size(), want.size());
  for (size_t b = 0; b < want.size(); ++b) {
    SCOPED_TRACE(::testing::Message() << "batch " << b);
    const int64_t rows = want[b].data.size(0);
    EXPECT_EQ(want[b].global_size, rows);
    std::vector<Tensor> data;
    std::vector<Tensor> targets;
    for (int64_t s = 0; s < count; ++s) {
      const Batch& part = shards[static_cast<size_t>(s)][b];
      EXPECT_EQ(part.index, want[b].index);
      EXPECT_EQ(part.global_size, rows);
      // tensor_split: the first rows % count parts have one row more.
      EXPECT_EQ(part.data.size(0), rows / count + (s < rows % count ? 1 : 0))
          << "shard " << s;
      EXPECT_EQ(part.target.defined(), want[b].target.defined());
      data.push_back(part.data);
      if (part.target.defined()) targets.push_back(part.target);
    }
    EXPECT_TRUE(all_close(cat(data), want[b].data, 0, 0));
    if (want[b].target.defined()) {
      EXPECT_TRUE(all_close(cat(targets), want[b].target, 0, 0));
      EXPECT_EQ(cat(targets).dtype(), want[b].target.dtype());
    }
  }
}

TEST(LoaderShardTest, ShardsTogetherAreTheUnshardedBatches) {
  for (int64_t batch_size : {4, 7}) {  // 20 rows: divides, does not divide
    for (bool drop_last : {false, true}) {
      for (int64_t workers : {0, 2}) {
        const LoaderOptions options = LoaderOptions()
                                          .batch_size(batch_size)
                                          .drop_last(drop_last)
                                          .shuffle(true)
                                          .seed(11)
                                          .workers(workers)
                                          .prefetch(1);
        const std::vector<Batch> want =
            collect(Loader(counting_tensors(20), options).epoch(3));
        for (int64_t count : {1, 2, 3, 5}) {
          SCOPED_TRACE(::testing::Message()
                       << "batch_size " << batch_size << ", drop_last " << drop_last
                       << ", " << workers << " workers, " << count << " shards");
          expect_shards_make(sharded_epoch(counting_tensors(20), options, count, 3),
                             want);
          EXPECT_EQ(
              Loader(counting_tensors(20), LoaderOptions(options).shard(count - 1, count))
                  .num_batches(),
              static_cast<int64_t>(want.size()));
        }
      }
    }
  }
}

TEST(LoaderShardTest, ResumedShardsMatchTheUnshardedTail) {
  const LoaderOptions options =
      LoaderOptions().batch_size(6).shuffle(true).seed(2).workers(2);
  Loader whole(counting_tensors(29), options);
  const std::vector<Batch> full = collect(whole.epoch(1));
  ASSERT_EQ(full.size(), 5u);
  for (int64_t start : {2, 4, 5}) {
    for (int64_t count : {2, 3, 5}) {
      SCOPED_TRACE(::testing::Message()
                   << "start " << start << ", " << count << " shards");
      expect_shards_make(sharded_epoch(counting_tensors(29), options, count, 1, start),
                         std::vector<Batch>(full.begin() + start, full.end()));
    }
  }
  // A shard's loader resumes like any other: the same checks, the same message.
  Loader shard(counting_tensors(29), LoaderOptions(options).shard(1, 3));
  EXPECT_TRUE(throws_with([&] { shard.epoch(1, 6); }, "start_batch 6 is outside [0, 5]"));
}

TEST(LoaderShardTest, EveryDatasetTypeShards) {
  const LoaderOptions options = LoaderOptions().batch_size(7).shuffle(true).seed(4);
  const std::vector<Batch> want = collect(Loader(counting_tensors(30), options).epoch(0));
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    const LoaderOptions with_workers = LoaderOptions(options).workers(workers);
    // Read by get() and stacked, or stacked by the dataset's own transform.
    expect_shards_make(sharded_epoch(CountingDataset(30), with_workers, 3, 0), want);
    expect_shards_make(
        sharded_epoch(CountingDataset(30).map(transforms::Stack<>()), with_workers, 4, 0),
        want);
  }
  // A dataset of TensorExample: batches without targets.
  manual_seed(0);
  const RandomDataset random(/*size=*/3, /*length=*/10);
  const LoaderOptions plain = LoaderOptions().batch_size(4);
  const std::vector<Batch> random_want = collect(Loader(random, plain).epoch(0));
  ASSERT_FALSE(random_want[0].target.defined());
  expect_shards_make(sharded_epoch(random, plain, 3, 0), random_want);
}

TEST(LoaderShardTest, ASamplerOfOnesOwnShards) {
  // Each replica of a DistributedSampler has its own batches; sharding
  // splits them further, the parts together still each replica's batches.
  for (size_t rank : {0, 1}) {
    auto sampler = std::make_shared<samplers::DistributedSampler>(23, 2, rank, true, 8);
    const LoaderOptions options = LoaderOptions().batch_size(5).workers(1);
    const std::vector<Batch> want =
        collect(Loader(counting_tensors(23), options, sampler).epoch(2));
    ASSERT_EQ(want.size(), 3u);
    for (int64_t count : {2, 3}) {
      std::vector<std::vector<Batch>> shards;
      for (int64_t s = 0; s < count; ++s) {
        Loader loader(
            counting_tensors(23), LoaderOptions(options).shard(s, count), sampler);
        EXPECT_EQ(loader.num_batches(), 3);
        shards.push_back(collect(loader.epoch(2)));
      }
      expect_shards_make(shards, want);
    }
  }
}

TEST(LoaderShardTest, PartSizesFollowTensorSplit) {
  // torch.tensor_split(torch.arange(10), 3) -> sizes 4, 3, 3;
  // torch.tensor_split(torch.arange(2), 5) -> sizes 1, 1, 0, 0, 0.
  const std::vector<size_t> ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<size_t> sizes;
  std::vector<size_t> joined;
  for (size_t s = 0; s < 3; ++s) {
    const auto part = detail::BatchPlan::split(ten, s, 3);
    sizes.push_back(part.size());
    joined.insert(joined.end(), part.begin(), part.end());
  }
  EXPECT_EQ(sizes, std::vector<size_t>({4, 3, 3}));
  EXPECT_EQ(joined, ten);
  sizes.clear();
  const std::vector<size_t> two = {7, 3};
  for (size_t s = 0; s < 5; ++s)
    sizes.push_back(detail::BatchPlan::split(two, s, 5).size());
  EXPECT_EQ(sizes, std::vector<size_t>({1, 1, 0, 0, 0}));
  EXPECT_EQ(detail::BatchPlan::split(two, 1, 5)[0], 3u);

  // Through the loader: 13 rows in batches of 13 over 4 shards -> 4, 3, 3, 3.
  std::vector<int64_t> rows;
  for (int64_t s = 0; s < 4; ++s) {
    Loader loader(counting_tensors(13), LoaderOptions().batch_size(13).shard(s, 4));
    const std::vector<Batch> batches = collect(loader.epoch(0));
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0].global_size, 13);
    rows.push_back(batches[0].data.size(0));
  }
  EXPECT_EQ(rows, std::vector<int64_t>({4, 3, 3, 3}));
}

TEST(LoaderShardTest, GlobalSizeIsTheWholeBatchsRows) {
  Loader whole(counting_tensors(10), LoaderOptions().batch_size(4));
  std::vector<int64_t> sizes;
  for (const Batch& batch : whole.epoch(0)) {
    EXPECT_EQ(batch.global_size, batch.data.size(0));
    sizes.push_back(batch.global_size);
  }
  EXPECT_EQ(sizes, std::vector<int64_t>({4, 4, 2}));
  Loader shard(counting_tensors(10), LoaderOptions().batch_size(4).shard(1, 2));
  sizes.clear();
  for (const Batch& batch : shard.epoch(0)) sizes.push_back(batch.global_size);
  EXPECT_EQ(sizes, std::vector<int64_t>({4, 4, 2}));
  // num_examples and num_batches stay those of the whole batches.
  EXPECT_EQ(shard.num_examples(), 10);
  EXPECT_EQ(shard.num_batches(), 3);
}

TEST(LoaderShardTest, AShardOfABatchTooSmallHasNoRows) {
  // 9 rows in batches of 4: the last batch has 1 row, so of 3 shards only
  // shard 0 gets a row of it; the others get [0, 2] data and [0] targets.
  for (int64_t workers : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    const LoaderOptions options = LoaderOptions().batch_size(4).workers(workers);
    for (int64_t s : {1, 2}) {
      const std::vector<Batch> from_tensors = collect(
          Loader(counting_tensors(9), LoaderOptions(options).shard(s, 3)).epoch(0));
      const std::vector<Batch> from_gets = collect(
          Loader(CountingDataset(9), LoaderOptions(options).shard(s, 3)).epoch(0));
      for (const std::vector<Batch>* batches : {&from_tensors, &from_gets}) {
        ASSERT_EQ(batches->size(), 3u);
        const Batch& last = (*batches)[2];
        EXPECT_EQ(last.index, 2);
        EXPECT_EQ(last.global_size, 1);
        EXPECT_EQ(last.data.sizes(), IntList({0, 2}));
        EXPECT_EQ(last.data.dtype(), kFloat32);
        EXPECT_EQ(last.target.sizes(), IntList({0}));
        EXPECT_EQ(last.target.dtype(), kInt64);
        EXPECT_EQ((*batches)[0].data.size(0), 1);  // 4 rows: 2, 1, 1
      }
    }
    const std::vector<Batch> first =
        collect(Loader(CountingDataset(9), LoaderOptions(options).shard(0, 3)).epoch(0));
    EXPECT_EQ(first[2].data.sizes(), IntList({1, 2}));
    EXPECT_EQ(first[2].target[0].item<int64_t>(), 8);
  }
  // A dataset without targets keeps them undefined.
  manual_seed(0);
  const std::vector<Batch> random = collect(
      Loader(RandomDataset(3, 5), LoaderOptions().batch_size(4).shard(3, 4)).epoch(0));
  ASSERT_EQ(random.size(), 2u);
  EXPECT_EQ(random[1].data.sizes(), IntList({0, 3}));
  EXPECT_FALSE(random[1].target.defined());
}

TEST(LoaderShardTest, AShardReadsOnlyItsOwnExamples) {
  // Examples a shard reads with get(): its part of each batch and no more.
  auto probe = std::make_shared<Probe>();
  Loader loader(CountingDataset(20, probe),
                LoaderOptions().batch_size(10).shuffle(true).shard(1, 4));
  std::set<int64_t> seen;
  int64_t rows = 0;
  for (const Batch& batch : loader.epoch(0)) {
    rows += batch.data.size(0);
    for (int64_t i = 0; i < batch.target.size(0); ++i)
      seen.insert(batch.target[i].item<int64_t>());
  }
  EXPECT_EQ(rows, 6);  // 10 rows over 4 shards: 3, 3, 2, 2, twice
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(probe->gets.load(), 6);
}

TEST(LoaderShardTest, BadShardsAreRefused) {
  EXPECT_TRUE(
      throws_with([] { Loader(counting_tensors(3), LoaderOptions().shard(0, 0)); },
                  "Loader: shard count must be >= 1, got 0"));
  EXPECT_TRUE(
      throws_with([] { Loader(counting_tensors(3), LoaderOptions().shard(0, -2)); },
                  "Loader: shard count must be >= 1, got -2"));
  EXPECT_TRUE(
      throws_with([] { Loader(counting_tensors(3), LoaderOptions().shard(-1, 2)); },
                  "Loader: shard index -1 is outside [0, 2)"));
  EXPECT_TRUE(
      throws_with([] { Loader(counting_tensors(3), LoaderOptions().shard(2, 2)); },
                  "Loader: shard index 2 is outside [0, 2)"));
  EXPECT_TRUE(throws_with([] { detail::BatchPlan::split({}, 3, 3); },
                          "data loader: shard 3 of 3 does not exist"));
  const LoaderOptions defaults;
  EXPECT_EQ(defaults.shard_index(), 0);
  EXPECT_EQ(defaults.shard_count(), 1);
}

}  // namespace
}  // namespace tandem::data
