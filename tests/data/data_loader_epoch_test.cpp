// The DataLoader's epochs by number: batch contents, drop_last, shuffling
// by (seed, epoch), the same batches for 0, 1 and 3 workers, resuming at
// batch k, early exits, bounded prefetch, failures that name their batch,
// samplers of one's own, datasets without targets, moved loaders.
#include <gtest/gtest.h>

#include <set>

#include "data/loader_testing.h"
#include "data/test_datasets.h"
#include "support/tensor_testing.h"
#include "tandem/data/data_loader.h"

namespace tandem::data {
namespace {

using data_testing::collect;
using data_testing::counting_tensors;
using data_testing::CountingDataset;
using data_testing::indices_of;
using data_testing::Probe;
using data_testing::shuffled;
using tandem::testing::all_close;
using tandem::testing::throws_with;

void expect_same_batches(const std::vector<Batch>& got, const std::vector<Batch>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t b = 0; b < got.size(); ++b) {
    EXPECT_EQ(got[b].index, want[b].index);
    EXPECT_TRUE(all_close(got[b].data, want[b].data, 0, 0)) << "batch " << b;
    EXPECT_TRUE(all_close(got[b].target, want[b].target, 0, 0)) << "batch " << b;
  }
}

// A loader over `dataset` in order 0, 1, ...
template <typename Dataset>
auto sequential(Dataset dataset, DataLoaderOptions options) {
  return make_data_loader<samplers::SequentialSampler>(std::move(dataset), options);
}

TEST(DataLoaderEpochTest, SequentialBatchesEndWithAShortOne) {
  auto loader = sequential(counting_tensors(10), DataLoaderOptions().batch_size(4));
  EXPECT_EQ(loader->num_batches(), 3);
  EXPECT_EQ(loader->num_examples(), 10);
  const std::vector<Batch> batches = collect(loader->epoch(0));
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].data.sizes(), IntList({2, 2}));
  EXPECT_EQ(batches[2].index, 2);
  EXPECT_EQ(batches[2].global_size, 2);
  EXPECT_TRUE(all_close(batches[1].data, arange(8, 16, kFloat32).view({4, 2}), 0, 0));
  EXPECT_EQ(indices_of(batches), std::vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(DataLoaderEpochTest, DropLastLeavesOutTheShortBatch) {
  auto loader =
      sequential(counting_tensors(10), DataLoaderOptions().batch_size(4).drop_last(true));
  EXPECT_EQ(loader->num_batches(), 2);
  EXPECT_EQ(indices_of(collect(loader->epoch(0))),
            std::vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST(DataLoaderEpochTest, ShuffledEpochsFollowSeedAndEpoch) {
  auto loader = shuffled(counting_tensors(10), 5, DataLoaderOptions().batch_size(3));
  for (size_t epoch : {0, 1, 4}) {
    const std::vector<size_t> order = samplers::RandomSampler(10, 5).indices(epoch);
    EXPECT_EQ(indices_of(collect(loader->epoch(static_cast<int64_t>(epoch)))),
              std::vector<int64_t>(order.begin(), order.end()));
  }
  EXPECT_NE(indices_of(collect(loader->epoch(0))), indices_of(collect(loader->epoch(1))));
  // A pass over the loader itself is the sampler's next epoch: 0, then 1.
  EXPECT_EQ(indices_of(collect(*loader)), indices_of(collect(loader->epoch(0))));
  EXPECT_EQ(indices_of(collect(*loader)), indices_of(collect(loader->epoch(1))));
}

// Every batch of epoch 1 of `dataset`, shuffled, with `workers` threads.
template <typename Dataset>
std::vector<Batch> shuffled_epoch(Dataset dataset, size_t workers) {
  return collect(
      shuffled(std::move(dataset),
               3,
               DataLoaderOptions().batch_size(7).workers(workers).max_jobs(workers))
          ->epoch(1));
}

TEST(DataLoaderEpochTest, BatchesAreTheSameForAnyWorkerCount) {
  const std::vector<Batch> want = shuffled_epoch(counting_tensors(50), 0);
  ASSERT_EQ(want.size(), 8u);
  for (size_t workers : {1, 3}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    expect_same_batches(shuffled_epoch(counting_tensors(50), workers), want);
    // A dataset read by get() and stacked gives the same batches as the
    // tensors gathered in one go.
    expect_same_batches(
        shuffled_epoch(CountingDataset(50).map(transforms::Stack<>()), workers), want);
  }
}

TEST(DataLoaderEpochTest, StartsAnEpochAtBatchK) {
  auto loader =
      shuffled(counting_tensors(20), 0, DataLoaderOptions().batch_size(3).workers(2));
  const std::vector<Batch> full = collect(loader->epoch(2));
  ASSERT_EQ(full.size(), 7u);
  for (int64_t k : {0, 1, 5, 7}) {
    const std::vector<Batch> tail = collect(loader->epoch(2, k));
    expect_same_batches(tail, std::vector<Batch>(full.begin() + k, full.end()));
  }
  EXPECT_TRUE(throws_with([&] { loader->epoch(2, 8); },
                          "DataLoader::epoch: start_batch 8 is outside [0, 7]"));
  EXPECT_TRUE(throws_with([&] { loader->epoch(2, -1); }, "start_batch -1 is outside"));
  EXPECT_TRUE(throws_with([&] { loader->epoch(-1); }, "epoch must be >= 0"));
}

TEST(DataLoaderEpochTest, LeavingEarlyOrDestroyingMidEpochStopsTheWorkers) {
  auto probe = std::make_shared<Probe>();
  probe->delay = std::chrono::milliseconds(2);
  {
    auto loader = sequential(CountingDataset(200, probe).map(transforms::Stack<>()),
                             DataLoaderOptions().batch_size(4).workers(3));
    for (const Batch& batch : loader->epoch(0)) {
      if (batch.index == 1) break;
    }
    // A new epoch ends the abandoned one and starts afresh.
    EXPECT_EQ(collect(loader->epoch(1, /*start_batch=*/48)).size(), 2u);
    auto range = loader->epoch(2);
    EXPECT_EQ(range.begin()->index, 0);
  }  // destroyed mid-epoch: the workers stop and join here
  // Made at most: epoch 0, batches 0-1 out, 6 ahead (8 x 4); epoch 1, the
  // last 2 batches (2 x 4); epoch 2, batch 0 out, 6 ahead (7 x 4).
  EXPECT_LE(probe->gets.load(), 32 + 8 + 28) << "workers stop where they are told";
}

TEST(DataLoaderEpochTest, PrefetchIsBounded) {
  auto probe = std::make_shared<Probe>();
  auto loader = sequential(CountingDataset(100, probe).map(transforms::Stack<>()),
                           DataLoaderOptions().batch_size(1).workers(2).max_jobs(4));
  auto range = loader->epoch(0);
  auto it = range.begin();
  ASSERT_EQ(it->index, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Batch 0 is out; at most max_jobs = 4 more may be made ahead.
  EXPECT_LE(probe->gets.load(), 5);
  EXPECT_GE(probe->gets.load(), 1);
}

TEST(DataLoaderEpochTest, AFailingGetNamesItsBatchForAnyWorkerCount) {
  for (size_t workers : {0, 1, 3}) {
    SCOPED_TRACE(::testing::Message() << workers << " workers");
    auto probe = std::make_shared<Probe>();
    probe->fail_at = 7;
    auto loader = sequential(CountingDataset(12, probe).map(transforms::Stack<>()),
                             DataLoaderOptions().batch_size(3).workers(workers));
    std::vector<int64_t> delivered;
    try {
      for (const Batch& batch : loader->epoch(0)) delivered.push_back(batch.index);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "data loader: batch 2 failed: broken example 7");
      try {
        std::rethrow_if_nested(e);
        ADD_FAILURE() << "the original exception is not nested";
      } catch (const std::runtime_error& original) {
        EXPECT_STREQ(original.what(), "broken example 7");
      }
    }
    EXPECT_EQ(delivered, std::vector<int64_t>({0, 1}));
  }
}

TEST(DataLoaderEpochTest, ADistributedSamplerGivesThisReplicasShare) {
  std::vector<int64_t> all;
  for (size_t rank : {0, 1}) {
    auto loader = make_data_loader(counting_tensors(11),
                                   samplers::DistributedSampler(11, 2, rank, true, 3),
                                   DataLoaderOptions().batch_size(4).workers(1));
    EXPECT_EQ(loader->num_examples(), 6);
    EXPECT_EQ(loader->num_batches(), 2);
    std::vector<int64_t> mine = indices_of(collect(loader->epoch(0)));
    mine.resize(mine.size() - loader->sampler().padded());  // evaluation leaves them out
    all.insert(all.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 11u);
  EXPECT_EQ(all.size(), 11u);
  EXPECT_TRUE(throws_with(
      [] {
        make_data_loader(counting_tensors(12), samplers::DistributedSampler(11, 2, 0));
      },
      "DataLoader: the sampler is made for 11 examples but the dataset has 12"));
}

TEST(DataLoaderEpochTest, ADatasetWithoutTargetsGivesDataOnly) {
  manual_seed(0);
  RandomDataset random(/*size=*/5, /*length=*/100);
  const Tensor rows = random.data();
  // In-memory rows without targets: Batches whose target is undefined.
  const std::vector<Batch> batches =
      collect(sequential(TensorDataset(rows), DataLoaderOptions(30))->epoch(0));
  ASSERT_EQ(batches.size(), 4u);
  EXPECT_EQ(batches[0].data.sizes(), IntList({30, 5}));
  EXPECT_FALSE(batches[0].target.defined());
  EXPECT_TRUE(all_close(batches[3].data, rows.narrow(0, 90, 10), 0, 0));
  // Stacked TensorExamples: batches of data alone, as the dataset makes them.
  const std::vector<TensorExample> stacked =
      collect(sequential(std::move(random).map(transforms::Stack<TensorExample>()),
                         DataLoaderOptions(30))
                  ->epoch(0));
  ASSERT_EQ(stacked.size(), 4u);
  EXPECT_TRUE(all_close(stacked[3].data, rows.narrow(0, 90, 10), 0, 0));
}

TEST(DataLoaderEpochTest, InvalidOptionsAreRefused) {
  EXPECT_TRUE(throws_with(
      [] { sequential(counting_tensors(3), DataLoaderOptions().batch_size(0)); },
      "DataLoader: batch_size must be positive"));
  EXPECT_TRUE(throws_with(
      [] { sequential(counting_tensors(3), DataLoaderOptions().workers(2).max_jobs(0)); },
      "DataLoader: max_jobs must be positive when there are workers"));
}

TEST(DataLoaderEpochTest, AMovedLoaderKeepsLoading) {
  DataLoader first(counting_tensors(9),
                   samplers::SequentialSampler(9),
                   DataLoaderOptions().batch_size(4).workers(2));
  auto range = first.epoch(0);
  EXPECT_EQ(range.begin()->index, 0);
  DataLoader second = std::move(first);
  EXPECT_EQ(indices_of(collect(second.epoch(0, 1))),
            std::vector<int64_t>({4, 5, 6, 7, 8}));
  DataLoader other(counting_tensors(9),
                   samplers::SequentialSampler(9),
                   DataLoaderOptions().batch_size(2).workers(2));
  EXPECT_EQ(other.epoch(0).begin()->index, 0);
  other = std::move(second);  // ends other's epoch in progress
  EXPECT_EQ(indices_of(collect(other.epoch(0, 2))), std::vector<int64_t>({8}));
}

}  // namespace
}  // namespace tandem::data
