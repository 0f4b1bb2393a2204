// The DataLoader's pin_memory option: with a GPU every batch's tensors are
// pinned; without one, the loader warns once, when it is made, and gives
// the same batches as without the option (as PyTorch's DataLoader), by
// epoch number or by passes over the loader.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/loader_testing.h"
#include "data/test_datasets.h"
#include "support/tensor_testing.h"
#include "tandem/core/cuda.h"
#include "tandem/core/warning.h"
#include "tandem/data/data_loader.h"

namespace tandem::data {
namespace {

using data_testing::counting_tensors;
using data_testing::CountingDataset;
using data_testing::shuffled;
using tandem::testing::all_close;

// Collects the warnings issued while it lives.
class WarningLog {
 public:
  WarningLog()
      : previous_(set_warning_handler(
            [this](const std::string& message) { messages.push_back(message); })) {}
  ~WarningLog() { set_warning_handler(previous_); }
  WarningLog(const WarningLog&) = delete;
  WarningLog& operator=(const WarningLog&) = delete;

  std::vector<std::string> messages;

 private:
  WarningHandler previous_;
};

// Without a GPU: exactly one warning, from `loader`, saying why.
void expect_warned_once_without_a_gpu(const WarningLog& log, const std::string& loader) {
  if (cuda::is_available()) {
    EXPECT_TRUE(log.messages.empty()) << log.messages.front();
    return;
  }
  ASSERT_EQ(log.messages.size(), 1u);
  const std::string& message = log.messages.front();
  EXPECT_NE(message.find(loader + ": pin_memory is ignored because no CUDA device is "
                                  "available"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find(cuda::is_built() ? "no GPU" : "built without CUDA"),
            std::string::npos)
      << message;
}

void expect_same_tensor(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_TRUE(got.defined()) << what;
  EXPECT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_TRUE(all_close(got, want, 0, 0)) << what;
  EXPECT_EQ(got.is_pinned(), cuda::is_available()) << what;
  EXPECT_FALSE(want.is_pinned()) << what;
}

TEST(PinMemoryLoader, SameEpochsPinnedWithAGpuAndOneWarningWithout) {
  for (size_t workers : {0, 2}) {
    const DataLoaderOptions options = DataLoaderOptions().batch_size(4).workers(workers);
    WarningLog log;
    auto plain = shuffled(counting_tensors(10), 7, options);
    auto pinned =
        shuffled(counting_tensors(10), 7, DataLoaderOptions(options).pin_memory(true));
    EXPECT_TRUE(pinned->options().pin_memory());
    for (int64_t epoch = 0; epoch < 2; ++epoch) {
      std::vector<Batch> want;
      for (const Batch& batch : plain->epoch(epoch)) want.push_back(batch);
      size_t b = 0;
      for (const Batch& batch : pinned->epoch(epoch)) {
        ASSERT_LT(b, want.size());
        const std::string what = "workers " + std::to_string(workers) + ", epoch " +
                                 std::to_string(epoch) + ", batch " + std::to_string(b);
        EXPECT_EQ(batch.index, want[b].index) << what;
        expect_same_tensor(batch.data, want[b].data, what + ": data");
        expect_same_tensor(batch.target, want[b].target, what + ": target");
        ++b;
      }
      EXPECT_EQ(b, want.size());
    }
    expect_warned_once_without_a_gpu(log, "DataLoader");  // once for two epochs
  }
}

TEST(PinMemoryLoader, SamePassesPinnedWithAGpuAndOneWarningWithout) {
  WarningLog log;
  const auto options = DataLoaderOptions().batch_size(3).workers(2);
  auto plain = make_data_loader<samplers::SequentialSampler>(
      CountingDataset(11).map(transforms::Stack<>()), options);
  auto pinned = make_data_loader<samplers::SequentialSampler>(
      CountingDataset(11).map(transforms::Stack<>()),
      DataLoaderOptions(options).pin_memory(true));
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<Example<>> want;
    for (auto& batch : *plain) want.push_back(batch);
    size_t b = 0;
    for (auto& batch : *pinned) {
      ASSERT_LT(b, want.size());
      const std::string what =
          "pass " + std::to_string(pass) + ", batch " + std::to_string(b);
      expect_same_tensor(batch.data, want[b].data, what + ": data");
      expect_same_tensor(batch.target, want[b].target, what + ": target");
      ++b;
    }
    EXPECT_EQ(b, want.size());
  }
  expect_warned_once_without_a_gpu(log, "DataLoader");
}

TEST(PinMemoryLoader, UnstackedBatchesArePinnedExampleByExample) {
  WarningLog log;
  auto loader = make_data_loader<samplers::SequentialSampler>(
      CountingDataset(5), DataLoaderOptions().batch_size(2).pin_memory(true));
  int64_t next = 0;
  for (std::vector<Example<>>& batch : *loader) {
    for (const Example<>& example : batch) {
      EXPECT_EQ(example.target.item<int64_t>(), next++);
      EXPECT_EQ(example.data.is_pinned(), cuda::is_available());
      EXPECT_EQ(example.target.is_pinned(), cuda::is_available());
    }
  }
  EXPECT_EQ(next, 5);
  expect_warned_once_without_a_gpu(log, "DataLoader");
}

}  // namespace
}  // namespace tandem::data
