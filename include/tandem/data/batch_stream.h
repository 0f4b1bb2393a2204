// The DataLoader's engine: batches made on worker threads, handed to the
// consumer strictly in order, with a bounded number made ahead. The
// DataLoader uses it; programs use the DataLoader.
//
//   detail::BatchStream<Example<>> stream(/*first=*/0, /*last=*/n, /*workers=*/2,
//       /*capacity=*/4, [&](size_t worker, size_t batch) { return make(batch); });
//   for (auto it = stream.begin(); it != stream.end(); ++it) use(*it);
//
// Note [Deterministic batches]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Batch b is always made from the same request (the loader fixes every
// batch's indices before any worker starts) and is handed over as the b-th
// batch, whichever worker made it and whenever it finished. So the batches
// are the same for 0, 1 or 8 workers, as long as the dataset's get() is a
// function of its index. A failure in batch b surfaces when the consumer
// reaches b, with the same message for any number of workers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "tandem/core/profiler.h"

namespace tandem::data::detail {

/// Runs jobs first..last-1 on worker threads, at most `capacity` jobs ahead
/// of the consumer, who waits for and releases them in order. Destroying
/// it stops the workers: jobs running finish, the rest never start.
class JobPrefetcher {
 public:
  using Job = std::function<void(size_t worker, size_t job)>;

  JobPrefetcher(size_t first, size_t last, size_t workers, size_t capacity, Job job);
  ~JobPrefetcher();
  JobPrefetcher(const JobPrefetcher&) = delete;
  JobPrefetcher& operator=(const JobPrefetcher&) = delete;

  /// Blocks until `job` has run; returns the exception it threw, if any.
  std::exception_ptr wait(size_t job);
  /// The consumer is done with `job` (its result slot may be reused).
  void release(size_t job);

 private:
  void work(size_t worker);
  void stop();
  size_t slot(size_t job) const { return job % capacity_; }

  Job job_;
  size_t last_;
  size_t capacity_;
  std::mutex mutex_;
  std::condition_variable claimable_;  // a job may start, or stop
  std::condition_variable finished_;   // a job has run
  size_t next_job_;                    // the next job a worker claims
  size_t released_;                    // jobs below this are released
  std::vector<char> done_;             // per slot: its job has run
  std::vector<std::exception_ptr> errors_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: started once the rest exists
};

/// Throws tandem::Error "data loader: batch <b> failed: <what>", with the
/// original exception nested (std::rethrow_if_nested gets it back).
[[noreturn]] void rethrow_batch_error(const std::exception_ptr& error, size_t batch);

/// Batches first..last-1 of a pass, made by `fetch(worker, batch)` on
/// `workers` threads (inline when 0), read in order. See Note
/// [Deterministic batches].
template <typename Batch>
class BatchStream {
 public:
  using Fetch = std::function<Batch(size_t worker, size_t batch)>;

  BatchStream(size_t first, size_t last, size_t workers, size_t capacity, Fetch fetch)
      : fetch_(std::move(fetch)), next_(first), last_(last) {
    if (workers == 0 || first >= last) return;
    slots_.resize(capacity);
    prefetcher_.emplace(first, last, workers, capacity, [this](size_t worker, size_t b) {
      slots_[b % slots_.size()].emplace(fetch_(worker, b));
    });
  }
  BatchStream(const BatchStream&) = delete;
  BatchStream& operator=(const BatchStream&) = delete;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using pointer = Batch*;
    using reference = Batch&;

    Iterator() = default;
    Batch& operator*() const { return *stream_->current_; }
    Batch* operator->() const { return &*stream_->current_; }
    Iterator& operator++() {
      if (!stream_->advance()) stream_ = nullptr;
      return *this;
    }
    bool operator==(const Iterator& other) const { return stream_ == other.stream_; }

   private:
    friend class BatchStream;
    explicit Iterator(BatchStream* stream) : stream_(stream) {}
    BatchStream* stream_ = nullptr;
  };

  /// Reads the first batch (on the first call) and points at the current one.
  Iterator begin() {
    if (!started_) advance();
    return Iterator(current_ ? this : nullptr);
  }
  Iterator end() { return Iterator(); }

 private:
  // Moves to the next batch; false (and no current batch) at the end.
  bool advance() {
    started_ = true;
    current_.reset();
    if (next_ >= last_) return false;
    const size_t batch = next_++;
    // The training loop's time in the loader: making a batch, or waiting
    // for a worker's.
    profiler::Span span(
        "data", prefetcher_ ? "DataLoader wait" : "DataLoader batch", kCPU);
    span.arg("batch", static_cast<int64_t>(batch));
    if (!prefetcher_) {
      try {
        current_.emplace(fetch_(0, batch));
      } catch (...) {
        rethrow_batch_error(std::current_exception(), batch);
      }
      return true;
    }
    const std::exception_ptr error = prefetcher_->wait(batch);
    std::optional<Batch>& slot = slots_[batch % slots_.size()];
    current_ = std::move(slot);
    slot.reset();
    prefetcher_->release(batch);
    if (error) rethrow_batch_error(error, batch);
    return true;
  }

  Fetch fetch_;
  size_t next_;
  size_t last_;
  bool started_ = false;
  std::optional<Batch> current_;
  std::vector<std::optional<Batch>> slots_;
  std::optional<JobPrefetcher> prefetcher_;  // last: joins before slots_ go
};

}  // namespace tandem::data::detail
