// The LibTorch-shaped API: make_data_loader over MNIST with Normalize and
// Stack, the default RandomSampler, unstacked batches, collated
// TensorDatasets, the seed tutorial's RandomDataset, worker-count
// independence, failures and early exits.
#include "tandem/data/data_loader.h"

#include <gtest/gtest.h>

#include "data/idx_testing.h"
#include "data/loader_testing.h"
#include "data/test_datasets.h"
#include "support/tensor_testing.h"

namespace tandem::data {
namespace {

using data_testing::counting_tensors;
using data_testing::CountingDataset;
using data_testing::Probe;
using data_testing::TempDir;
using data_testing::write_mnist_split;
using tandem::testing::all_close;
using tandem::testing::throws_with;

TEST(DataLoaderTest, MnistWithNormalizeAndStackAsInLibTorch) {
  TempDir dir;
  write_mnist_split(dir.path(), "train", {4, 1, 0, 9, 2}, /*gzipped=*/true);
  const Tensor pixels = datasets::MNIST(dir.path().string()).images();

  auto dataset = datasets::MNIST(dir.path().string())
                     .map(transforms::Normalize<>(0.5, 0.25))
                     .map(transforms::Stack<>());
  auto loader = make_data_loader<samplers::SequentialSampler>(
      std::move(dataset), DataLoaderOptions().batch_size(2).workers(2));
  for (int pass = 0; pass < 2; ++pass) {
    int64_t seen = 0;
    for (auto& batch : *loader) {
      const int64_t n = batch.data.size(0);
      EXPECT_EQ(batch.data.sizes(), IntList({n, 1, 28, 28}));
      EXPECT_EQ(batch.target.sizes(), IntList({n}));
      EXPECT_TRUE(
          all_close(batch.data, (pixels.narrow(0, seen, n) - 0.5) / 0.25, 1e-6, 1e-6));
      seen += n;
    }
    EXPECT_EQ(seen, 5);
  }
}

// The examples of one pass, in order (targets of counting data).
template <typename Loader>
std::vector<int64_t> pass_indices(Loader& loader) {
  return data_testing::indices_of(data_testing::collect(loader));
}

TEST(DataLoaderTest, DefaultRandomSamplerReshufflesEachPass) {
  manual_seed(1);
  auto loader = make_data_loader(counting_tensors(40).map(transforms::Stack<>()), 8);
  const std::vector<int64_t> first = pass_indices(*loader);
  const std::vector<int64_t> second = pass_indices(*loader);
  EXPECT_EQ(std::set<int64_t>(first.begin(), first.end()).size(), 40u);
  EXPECT_EQ(std::set<int64_t>(second.begin(), second.end()).size(), 40u);
  EXPECT_NE(first, second);
  manual_seed(1);
  auto again = make_data_loader(counting_tensors(40).map(transforms::Stack<>()), 8);
  EXPECT_EQ(pass_indices(*again), first) << "reproducible after manual_seed";
}

TEST(DataLoaderTest, WithoutStackABatchIsAVectorOfExamples) {
  auto loader = make_data_loader<samplers::SequentialSampler>(CountingDataset(5),
                                                              DataLoaderOptions(2));
  std::vector<size_t> sizes;
  for (std::vector<Example<>>& batch : *loader) sizes.push_back(batch.size());
  EXPECT_EQ(sizes, std::vector<size_t>({2, 2, 1}));
}

TEST(DataLoaderTest, ATensorDatasetComesCollatedAsPyTorchsDoes) {
  // DataLoader(TensorDataset(x, y), batch_size=2) gives [x_batch, y_batch].
  auto loader = make_data_loader<samplers::SequentialSampler>(counting_tensors(5),
                                                              DataLoaderOptions(2));
  std::vector<int64_t> indices;
  for (Batch& batch : *loader) {
    EXPECT_EQ(batch.data.sizes(), IntList({batch.global_size, 2}));
    indices.push_back(batch.index);
  }
  EXPECT_EQ(indices, std::vector<int64_t>({0, 1, 2}));
  EXPECT_EQ(pass_indices(*loader), std::vector<int64_t>({0, 1, 2, 3, 4}));
}

TEST(DataLoaderTest, SeedTutorialRandomDataset) {
  // rand_loader = DataLoader(RandomDataset(input_size, data_size),
  //                          batch_size=batch_size, shuffle=True)
  auto loader =
      make_data_loader(RandomDataset(5, 100).map(transforms::Stack<TensorExample>()),
                       DataLoaderOptions().batch_size(30));
  std::vector<IntList> sizes;
  for (auto& data : *loader) sizes.push_back(data.data.sizes());
  EXPECT_EQ(sizes, std::vector<IntList>({{30, 5}, {30, 5}, {30, 5}, {10, 5}}));
}

TEST(DataLoaderTest, SameBatchesForAnyWorkerCount) {
  std::vector<std::vector<int64_t>> passes;
  for (size_t workers : {0, 1, 3}) {
    auto loader = make_data_loader(
        CountingDataset(50).map(transforms::Stack<>()),
        samplers::RandomSampler(50, /*seed=*/3),
        DataLoaderOptions().batch_size(7).workers(workers).drop_last(true));
    passes.push_back(pass_indices(*loader));
    EXPECT_EQ(passes.back().size(), 49u);
  }
  EXPECT_EQ(passes[1], passes[0]);
  EXPECT_EQ(passes[2], passes[0]);
}

TEST(DataLoaderTest, AFailingGetSurfacesAndEarlyExitsStop) {
  auto probe = std::make_shared<Probe>();
  probe->fail_at = 4;
  auto loader = make_data_loader<samplers::SequentialSampler>(
      CountingDataset(30, probe).map(transforms::Stack<>()),
      DataLoaderOptions().batch_size(3).workers(2));
  EXPECT_TRUE(throws_with([&] { pass_indices(*loader); },
                          "data loader: batch 1 failed: broken example 4"));
  // Leave a pass after its first batch, then let the loader go mid-pass.
  for (auto& batch : *loader) {
    EXPECT_EQ(batch.target[0].item<int64_t>(), 0);
    break;
  }
  auto it = loader->begin();
  EXPECT_EQ(it->target[2].item<int64_t>(), 2);
  loader.reset();
}

}  // namespace
}  // namespace tandem::data
