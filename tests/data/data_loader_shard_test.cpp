// DataLoaderOptions::shard: the shards' parts of each batch, in order, are
// the unsharded batch (shuffled, dividing or not, drop_last, workers,
// resumed, with a sampler of one's own, any dataset type); part sizes as
// torch.tensor_split; global_size; shards of 0 rows; a shard reads only its
// own examples; bad shards are refused.
#include <gtest/gtest.h>

#include <set>

#include "data/loader_testing.h"
#include "data/test_datasets.h"
#include "support/tensor_testing.h"
#include "tandem/data/data_loader.h"
#include "tandem/ops/shape.h"

namespace tandem::data {
namespace {

using data_testing::collect;
using data_testing::counting_tensors;
using data_testing::CountingDataset;
using data_testing::Probe;
using data_testing::shuffled;
using tandem::testing::all_close;
using tandem::testing::throws_with;

// The batches of `epoch` from batch `start` on, of the loader over `dataset`
// in `sampler`'s order.
template <typename Dataset, typename Sampler>
std::vector<Batch> epoch_of(const Dataset& dataset,
                            const Sampler& sampler,
                            const DataLoaderOptions& options,
                            int64_t epoch,
                            int64_t start = 0) {
  return collect(make_data_loader(dataset, sampler, options)->epoch(epoch, start));
}

// The shards' batches: shards[s][b] is batch b of shard s of `count`.
template <typename Dataset, typename Sampler>
std::vector<std::vector<Batch>> sharded_epoch(const Dataset& dataset,
                                              const Sampler& sampler,
                                              const DataLoaderOptions& options,
                                              size_t count,
                                              int64_t epoch,
                                              int64_t start = 0) {
  std::vector<std::vector<Batch>> shards;
  for (size_t s = 0; s < count; ++s) {
    shards.push_back(epoch_of(
        dataset, sampler, DataLoaderOptions(options).shard(s, count), epoch, start));
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

TEST(DataLoaderShardTest, ShardsTogetherAreTheUnshardedBatches) {
  const samplers::RandomSampler sampler(20, /*seed=*/11);
  for (size_t batch_size : {4, 7}) {  // 20 rows: divides, does not divide
    for (bool drop_last : {false, true}) {
      for (size_t workers : {0, 2}) {
        const DataLoaderOptions options = DataLoaderOptions()
                                              .batch_size(batch_size)
                                              .drop_last(drop_last)
                                              .workers(workers)
                                              .max_jobs(workers);
        const std::vector<Batch> want =
            epoch_of(counting_tensors(20), sampler, options, 3);
        for (size_t count : {1, 2, 3, 5}) {
          SCOPED_TRACE(::testing::Message()
                       << "batch_size " << batch_size << ", drop_last " << drop_last
                       << ", " << workers << " workers, " << count << " shards");
          expect_shards_make(
              sharded_epoch(counting_tensors(20), sampler, options, count, 3), want);
          auto last =
              make_data_loader(counting_tensors(20),
                               sampler,
                               DataLoaderOptions(options).shard(count - 1, count));
          EXPECT_EQ(last->num_batches(), static_cast<int64_t>(want.size()));
          EXPECT_EQ(last->options().shard_index(), count - 1);
          EXPECT_EQ(last->options().shard_count(), count);
        }
      }
    }
  }
}

TEST(DataLoaderShardTest, ResumedShardsMatchTheUnshardedTail) {
  const samplers::RandomSampler sampler(29, /*seed=*/2);
  const DataLoaderOptions options = DataLoaderOptions().batch_size(6).workers(2);
  const std::vector<Batch> full = epoch_of(counting_tensors(29), sampler, options, 1);
  ASSERT_EQ(full.size(), 5u);
  for (int64_t start : {2, 4, 5}) {
    for (size_t count : {2, 3, 5}) {
      SCOPED_TRACE(::testing::Message()
                   << "start " << start << ", " << count << " shards");
      expect_shards_make(
          sharded_epoch(counting_tensors(29), sampler, options, count, 1, start),
          std::vector<Batch>(full.begin() + start, full.end()));
    }
  }
  // A shard's loader resumes like any other: the same checks, the same message.
  auto shard = make_data_loader(
      counting_tensors(29), sampler, DataLoaderOptions(options).shard(1, 3));
  EXPECT_TRUE(
      throws_with([&] { shard->epoch(1, 6); }, "start_batch 6 is outside [0, 5]"));
}

TEST(DataLoaderShardTest, EveryDatasetTypeShards) {
  const samplers::RandomSampler sampler(30, /*seed=*/4);
  const DataLoaderOptions options = DataLoaderOptions().batch_size(7);
  const std::vector<Batch> want = epoch_of(counting_tensors(30), sampler, options, 0);
  for (size_t workers : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    const DataLoaderOptions with_workers = DataLoaderOptions(options).workers(workers);
    // Read by get() and stacked by the dataset's own transform.
    expect_shards_make(
        sharded_epoch(
            CountingDataset(30).map(transforms::Stack<>()), sampler, with_workers, 4, 0),
        want);
  }
  // Unstacked batches shard too: each shard's vector holds its examples.
  const samplers::SequentialSampler in_order(5);
  std::vector<size_t> sizes;
  for (size_t s = 0; s < 3; ++s) {
    auto loader = make_data_loader(
        CountingDataset(5), in_order, DataLoaderOptions().batch_size(4).shard(s, 3));
    for (const std::vector<Example<>>& batch : loader->epoch(0))
      sizes.push_back(batch.size());
  }
  EXPECT_EQ(sizes, std::vector<size_t>({2, 1, 1, 0, 1, 0}));
  // In-memory rows without targets: batches without targets.
  manual_seed(0);
  const TensorDataset random(RandomDataset(/*size=*/3, /*length=*/10).data());
  const std::vector<Batch> random_want =
      epoch_of(random, samplers::SequentialSampler(10), DataLoaderOptions(4), 0);
  ASSERT_FALSE(random_want[0].target.defined());
  expect_shards_make(
      sharded_epoch(random, samplers::SequentialSampler(10), DataLoaderOptions(4), 3, 0),
      random_want);
}

TEST(DataLoaderShardTest, ASamplerOfOnesOwnShards) {
  // Each replica of a DistributedSampler has its own batches; sharding
  // splits them further, the parts together still each replica's batches.
  for (size_t rank : {0, 1}) {
    const samplers::DistributedSampler sampler(23, 2, rank, true, 8);
    const DataLoaderOptions options = DataLoaderOptions().batch_size(5).workers(1);
    const std::vector<Batch> want = epoch_of(counting_tensors(23), sampler, options, 2);
    ASSERT_EQ(want.size(), 3u);
    for (size_t count : {2, 3}) {
      expect_shards_make(sharded_epoch(counting_tensors(23), sampler, options, count, 2),
                         want);
    }
  }
}

TEST(DataLoaderShardTest, PartSizesFollowTensorSplit) {
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
  for (size_t s = 0; s < 4; ++s) {
    const std::vector<Batch> batches = epoch_of(counting_tensors(13),
                                                samplers::SequentialSampler(13),
                                                DataLoaderOptions(13).shard(s, 4),
                                                0);
    ASSERT_EQ(batches.size(), 1u);
    EXPECT_EQ(batches[0].global_size, 13);
    rows.push_back(batches[0].data.size(0));
  }
  EXPECT_EQ(rows, std::vector<int64_t>({4, 3, 3, 3}));
}

TEST(DataLoaderShardTest, GlobalSizeIsTheWholeBatchsRows) {
  const samplers::SequentialSampler sampler(10);
  std::vector<int64_t> sizes;
  for (const Batch& batch :
       epoch_of(counting_tensors(10), sampler, DataLoaderOptions(4), 0)) {
    EXPECT_EQ(batch.global_size, batch.data.size(0));
    sizes.push_back(batch.global_size);
  }
  EXPECT_EQ(sizes, std::vector<int64_t>({4, 4, 2}));
  auto shard =
      make_data_loader(counting_tensors(10), sampler, DataLoaderOptions(4).shard(1, 2));
  sizes.clear();
  for (const Batch& batch : shard->epoch(0)) sizes.push_back(batch.global_size);
  EXPECT_EQ(sizes, std::vector<int64_t>({4, 4, 2}));
  // num_examples and num_batches stay those of the whole batches.
  EXPECT_EQ(shard->num_examples(), 10);
  EXPECT_EQ(shard->num_batches(), 3);
}

TEST(DataLoaderShardTest, AShardOfABatchTooSmallHasNoRows) {
  // 9 rows in batches of 4: the last batch has 1 row, so of 3 shards only
  // shard 0 gets a row of it; the others get [0, 2] data and [0] targets.
  const samplers::SequentialSampler sampler(9);
  const auto stacked = CountingDataset(9).map(transforms::Stack<>());
  for (size_t workers : {0, 2}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    const DataLoaderOptions options = DataLoaderOptions().batch_size(4).workers(workers);
    for (size_t s : {1, 2}) {
      const DataLoaderOptions shard = DataLoaderOptions(options).shard(s, 3);
      const std::vector<Batch> from_tensors =
          epoch_of(counting_tensors(9), sampler, shard, 0);
      const std::vector<Batch> from_gets = epoch_of(stacked, sampler, shard, 0);
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
        epoch_of(stacked, sampler, DataLoaderOptions(options).shard(0, 3), 0);
    EXPECT_EQ(first[2].data.sizes(), IntList({1, 2}));
    EXPECT_EQ(first[2].target[0].item<int64_t>(), 8);
  }
  // A dataset without targets keeps them undefined.
  manual_seed(0);
  const std::vector<Batch> random = epoch_of(TensorDataset(RandomDataset(3, 5).data()),
                                             samplers::SequentialSampler(5),
                                             DataLoaderOptions(4).shard(3, 4),
                                             0);
  ASSERT_EQ(random.size(), 2u);
  EXPECT_EQ(random[1].data.sizes(), IntList({0, 3}));
  EXPECT_FALSE(random[1].target.defined());
}

TEST(DataLoaderShardTest, AShardReadsOnlyItsOwnExamples) {
  // Examples a shard reads with get(): its part of each batch and no more.
  auto probe = std::make_shared<Probe>();
  auto loader = shuffled(CountingDataset(20, probe).map(transforms::Stack<>()),
                         0,
                         DataLoaderOptions().batch_size(10).shard(1, 4));
  std::set<int64_t> seen;
  int64_t rows = 0;
  for (const Batch& batch : loader->epoch(0)) {
    rows += batch.data.size(0);
    for (int64_t i = 0; i < batch.target.size(0); ++i)
      seen.insert(batch.target[i].item<int64_t>());
  }
  EXPECT_EQ(rows, 6);  // 10 rows over 4 shards: 3, 3, 2, 2, twice
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(probe->gets.load(), 6);
}

TEST(DataLoaderShardTest, BadShardsAreRefused) {
  const auto make = [](size_t index, size_t count) {
    make_data_loader(counting_tensors(3), DataLoaderOptions().shard(index, count));
  };
  EXPECT_TRUE(
      throws_with([&] { make(0, 0); }, "DataLoader: shard count must be >= 1, got 0"));
  EXPECT_TRUE(
      throws_with([&] { make(2, 2); }, "DataLoader: shard index 2 is outside [0, 2)"));
  EXPECT_TRUE(
      throws_with([&] { make(5, 2); }, "DataLoader: shard index 5 is outside [0, 2)"));
  EXPECT_TRUE(throws_with([] { detail::BatchPlan::split({}, 3, 3); },
                          "data loader: shard 3 of 3 does not exist"));
  const DataLoaderOptions defaults;
  EXPECT_EQ(defaults.shard_index(), 0u);
  EXPECT_EQ(defaults.shard_count(), 1u);
}

}  // namespace
}  // namespace tandem::data
