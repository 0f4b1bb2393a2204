#include "tandem/data/batch_stream.h"

#include "tandem/core/error.h"

namespace tandem::data::detail {

JobPrefetcher::JobPrefetcher(
    size_t first, size_t last, size_t workers, size_t capacity, Job job)
    : job_(std::move(job)),
      last_(last),
      capacity_(capacity),
      next_job_(first),
      released_(first),
      done_(capacity, 0),
      errors_(capacity) {
  TANDEM_INTERNAL_ASSERT(workers > 0 && capacity > 0,
                         "JobPrefetcher needs workers and room");
  threads_.reserve(workers);
  try {
    for (size_t w = 0; w < workers; ++w) threads_.emplace_back([this, w] { work(w); });
  } catch (...) {  // no thread to be had: stop the ones started, then report
    stop();
    throw;
  }
}

JobPrefetcher::~JobPrefetcher() { stop(); }

void JobPrefetcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  claimable_.notify_all();
  for (std::thread& thread : threads_) thread.join();
}

void JobPrefetcher::work(size_t worker) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    claimable_.wait(lock, [&] {
      return stopping_ || next_job_ >= last_ || next_job_ < released_ + capacity_;
    });
    if (stopping_ || next_job_ >= last_) return;
    const size_t job = next_job_++;
    lock.unlock();
    std::exception_ptr error;
    try {
      profiler::Span span("data", "DataLoader worker batch", kCPU);
      span.arg("batch", static_cast<int64_t>(job));
      job_(worker, job);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    // Handed over under the lock, so the consumer's reads (and the
    // exception's release) happen after the worker's writes.
    errors_[slot(job)] = std::move(error);
    done_[slot(job)] = 1;
    finished_.notify_all();
  }
}

std::exception_ptr JobPrefetcher::wait(size_t job) {
  std::unique_lock<std::mutex> lock(mutex_);
  TANDEM_INTERNAL_ASSERT(job == released_, "jobs must be awaited in order");
  finished_.wait(lock, [&] { return done_[slot(job)] != 0; });
  return std::exchange(errors_[slot(job)], nullptr);
}

void JobPrefetcher::release(size_t job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    TANDEM_INTERNAL_ASSERT(job == released_, "jobs must be released in order");
    done_[slot(job)] = 0;
    released_ = job + 1;
  }
  claimable_.notify_all();
}

void rethrow_batch_error(const std::exception_ptr& error, size_t batch) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    std::throw_with_nested(
        Error(tandem::detail::str("data loader: batch ", batch, " failed: ", e.what())));
  } catch (...) {
    std::throw_with_nested(Error(
        tandem::detail::str("data loader: batch ",
                            batch,
                            " failed with an exception that is not a std::exception")));
  }
}

}  // namespace tandem::data::detail
