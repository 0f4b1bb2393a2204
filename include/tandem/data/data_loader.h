// The data loader with LibTorch's shape, so LibTorch programs port by
// renaming torch:: to tandem::.
//
//   auto dataset = tandem::data::datasets::MNIST(root)
//                      .map(tandem::data::transforms::Normalize<>(0.1307, 0.3081))
//                      .map(tandem::data::transforms::Stack<>());
//   auto loader =
//   tandem::data::make_data_loader<tandem::data::samplers::SequentialSampler>(
//       std::move(dataset), tandem::data::DataLoaderOptions().batch_size(64).workers(2));
//   for (auto& batch : *loader) train_step(batch.data, batch.target);
//
// Each `for` over the loader is one pass: begin() starts the sampler's next
// epoch (a RandomSampler reshuffles) and ends any pass in progress. With
// workers > 0, batches are made on that many threads (each with its own
// copy of the dataset), at most max_jobs ahead; they arrive in order and
// are the same whatever the worker count (Note [Deterministic batches]).
// With pin_memory(true) the workers put each batch's tensors in pinned
// memory (tandem/data/pin_memory.h). A batch that fails throws in the
// loop, naming the batch. Leaving the loop early, or destroying the loader
// mid-pass, stops the workers.
//
// For new code, tandem::data::Loader (loader.h) is simpler and resumable.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "tandem/core/error.h"
#include "tandem/data/batch_plan.h"
#include "tandem/data/batch_stream.h"
#include "tandem/data/pin_memory.h"
#include "tandem/data/sampler.h"

namespace tandem::data {

class DataLoaderOptions {
 public:
  DataLoaderOptions() = default;
  DataLoaderOptions(
      size_t batch_size)  // NOLINT(google-explicit-constructor): as LibTorch
      : batch_size_(batch_size) {}

  DataLoaderOptions& batch_size(size_t value) {
    batch_size_ = value;
    return *this;
  }
  /// Threads making batches; 0 makes them on the calling thread.
  DataLoaderOptions& workers(size_t value) {
    workers_ = value;
    return *this;
  }
  /// Batches made ahead of the consumer at most (default 2 * workers).
  DataLoaderOptions& max_jobs(size_t value) {
    max_jobs_ = value;
    return *this;
  }
  /// Leave out the last batch when it is smaller than batch_size.
  DataLoaderOptions& drop_last(bool value) {
    drop_last_ = value;
    return *this;
  }

  /// Batches with their tensors in pinned memory, pinned by the workers, so
  /// that copies to a GPU can be non_blocking (PyTorch's DataLoader option;
  /// LibTorch's has none). Without a GPU: a warning, and ordinary batches.
  /// See tandem/data/pin_memory.h.
  DataLoaderOptions& pin_memory(bool value) {
    pin_memory_ = value;
    return *this;
  }

  size_t batch_size() const { return batch_size_; }
  size_t workers() const { return workers_; }
  size_t max_jobs() const { return max_jobs_.value_or(2 * workers_); }
  bool drop_last() const { return drop_last_; }
  bool pin_memory() const { return pin_memory_; }

 private:
  size_t batch_size_ = 1;
  size_t workers_ = 0;
  std::optional<size_t> max_jobs_;
  bool drop_last_ = false;
  bool pin_memory_ = false;
};

template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using Iterator = typename detail::BatchStream<BatchType>::Iterator;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : sampler_(std::move(sampler)), options_(options) {
    TANDEM_CHECK(options_.batch_size() > 0, "data loader: batch_size must be positive");
    TANDEM_CHECK(options_.workers() == 0 || options_.max_jobs() > 0,
                 "data loader: max_jobs must be positive when there are workers");
    pin_ = options_.pin_memory() && detail::pin_memory_usable("DataLoader");
    // One copy per worker, so no two threads call get() on one object.
    const size_t copies = std::max<size_t>(options_.workers(), 1);
    datasets_.reserve(copies);
    for (size_t i = 1; i < copies; ++i) datasets_.push_back(dataset);
    datasets_.push_back(std::move(dataset));
  }
  // Workers point into the loader: it stays where it was made.
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  /// Starts a pass (the sampler's next epoch) and points at its first batch.
  Iterator begin() {
    join();
    sampler_.reset();
    std::vector<size_t> order =
        sampler_.next(std::numeric_limits<size_t>::max()).value_or(std::vector<size_t>{});
    plan_.emplace(std::move(order), options_.batch_size(), options_.drop_last());
    stream_ = std::make_unique<detail::BatchStream<BatchType>>(
        0,
        plan_->num_batches(),
        options_.workers(),
        options_.max_jobs(),
        [this](size_t worker, size_t batch) {
          BatchType made = datasets_[worker].get_batch(plan_->batch(batch));
          if (pin_) detail::pin_batch(made);
          return made;
        });
    return stream_->begin();
  }
  Iterator end() { return Iterator(); }

  /// Ends the pass in progress, if any: stops and joins the workers.
  void join() { stream_.reset(); }

  const DataLoaderOptions& options() const { return options_; }

 private:
  std::vector<Dataset> datasets_;
  Sampler sampler_;
  DataLoaderOptions options_;
  bool pin_ = false;  // pin_memory asked for and possible
  std::optional<detail::BatchPlan> plan_;
  std::unique_ptr<detail::BatchStream<BatchType>> stream_;  // last: stops first
};

/// A loader over `dataset` with a `Sampler` made for its size.
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
    Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const std::optional<size_t> size = dataset.size();
  TANDEM_CHECK(size.has_value(),
               "make_data_loader: the dataset does not know its size, so no sampler "
               "can be made for it; pass one");
  Sampler sampler(*size);
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(
      std::move(dataset), std::move(sampler), options);
}

/// A loader over `dataset` in the order `sampler` gives.
template <typename Dataset, typename Sampler>
requires std::derived_from<Sampler, samplers::Sampler>
    std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(
        Dataset dataset,
        Sampler sampler,
        DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(
      std::move(dataset), std::move(sampler), options);
}

}  // namespace tandem::data
