// Datasets for the loader tests. Example i of CountingDataset is data
// [2i, 2i + 1] (float32) with target i (int64), like row i of
// counting_tensors(); its probe, shared by every copy, counts get() calls
// and can make one index fail or every get() slow.
//
//   auto probe = std::make_shared<Probe>();
//   probe->fail_at = 7;
//   CountingDataset dataset(20, probe);
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "tandem/data/data.h"
#include "tandem/ops/factory.h"

namespace tandem::data::data_testing {

struct Probe {
  std::atomic<int64_t> gets{0};
  int64_t fail_at = -1;
  std::chrono::milliseconds delay{0};
};

class CountingDataset : public datasets::Dataset<CountingDataset> {
 public:
  explicit CountingDataset(int64_t size,
                           std::shared_ptr<Probe> probe = std::make_shared<Probe>())
      : size_(size), probe_(std::move(probe)) {}

  Example<> get(size_t index) override {
    ++probe_->gets;
    if (probe_->delay.count() > 0) std::this_thread::sleep_for(probe_->delay);
    const auto i = static_cast<int64_t>(index);
    if (i == probe_->fail_at)
      throw std::runtime_error("broken example " + std::to_string(i));
    return {tensor({2.0f * static_cast<float>(i), 2.0f * static_cast<float>(i) + 1.0f}),
            scalar_tensor(static_cast<double>(i), kInt64)};
  }
  std::optional<size_t> size() const override { return static_cast<size_t>(size_); }

 private:
  int64_t size_;
  std::shared_ptr<Probe> probe_;
};

/// The rows of CountingDataset(n) as tensors: data [n, 2], targets [n].
inline TensorDataset counting_tensors(int64_t n) {
  return TensorDataset(arange(0, 2 * n, kFloat32).view({n, 2}), arange(0, n, kInt64));
}

}  // namespace tandem::data::data_testing
