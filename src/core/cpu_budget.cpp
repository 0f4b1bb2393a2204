// The core budget, busy-device accounting and the intra-op thread pool.
#include "tandem/core/cpu_budget.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/spin_wait.h"
#include "tandem/core/error.h"
#include "tandem/core/warning.h"

namespace tandem {
namespace {

// Note [Default core budget]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// std::thread::hardware_concurrency() counts the machine's cores, not the
// ones this process may use: under taskset, a cgroup cpuset (containers,
// batch schedulers) or a launcher that pins each rank, it would run more
// threads than it has cores. So the default counts the affinity mask. And
// LibTorch users set OMP_NUM_THREADS to size torch's pool (torchrun sets
// it to 1 for every rank): tandem reads it the way LibTorch does (the
// leading number, so the first level of an OpenMP list "4,2"; a value that
// is not a positive number is ignored, with a warning), and it wins over
// the mask, as it does in LibTorch. set_num_threads wins over both.

// The leading positive number of OMP_NUM_THREADS, 0 when unset, -1 when
// set to something else.
int64_t omp_num_threads() {
  const char* value = std::getenv("OMP_NUM_THREADS");
  if (value == nullptr) return 0;
  const char* p = value;
  while (std::isspace(static_cast<unsigned char>(*p))) ++p;
  int64_t n = 0;
  const char* digits = p;
  while (std::isdigit(static_cast<unsigned char>(*p)) && n < (int64_t{1} << 40)) {
    n = n * 10 + (*p++ - '0');
  }
  if (p == digits || n < 1) return -1;
  return n;
}

int64_t default_budget() {
  const int64_t omp = omp_num_threads();
  if (omp > 0) return omp;
  if (omp < 0) {
    warn(std::string("ignoring OMP_NUM_THREADS=") + std::getenv("OMP_NUM_THREADS") +
         ", which is not a positive number of threads; using the " +
         std::to_string(available_cores()) + " cores this process may run on");
  }
  return available_cores();
}

// Note [Core budget]
// ~~~~~~~~~~~~~~~~~~
// The budget is num_threads() tokens, one per thread that computes. A busy
// device takes one before it runs a task, so at most num_threads() devices
// compute at once (eight logical devices on two cores take turns instead of
// thrashing). parallel_for takes one more per helper thread it wakes, and
// never waits for them: it runs with what is free. So devices that start
// and stop at different times never run more threads than the budget, not
// even for a moment (a device that started alone keeps its helpers only
// until its parallel_for ends).
//
// A device's share is num_threads() / (busy + waiting devices): a device
// that waits for a token stops the busy ones from taking helpers, so it
// gets the next free token. Threads outside executors (the main thread)
// hold no token; only their helpers count.
//
// The counts are atomics written under the mutex, so the condition is
// consistent for waiters while intra_op_threads() reads them without a lock
// (it runs on every op).
class Budget {
 public:
  Budget() : limit_(default_budget()) {}

  void set_limit(int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = n;
    cv_.notify_all();
  }
  int64_t limit() const { return limit_.load(std::memory_order_relaxed); }
  int64_t devices() const { return devices_.load(std::memory_order_relaxed); }
  int64_t share() const {
    const int64_t wanting = devices_.load(std::memory_order_relaxed) +
                            waiting_.load(std::memory_order_relaxed);
    return std::max<int64_t>(1, limit() / std::max<int64_t>(1, wanting));
  }

  void acquire_device() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    cv_.wait(lock, [&] { return used_ < limit_; });
    --waiting_;
    ++devices_;
    ++used_;
  }
  void release_device() {
    std::lock_guard<std::mutex> lock(mutex_);
    --devices_;
    --used_;
    cv_.notify_all();
  }
  /// Takes up to `wanted` tokens for helper threads; returns how many.
  int64_t take_helpers(int64_t wanted) {
    std::lock_guard<std::mutex> lock(mutex_);
    const int64_t n = std::clamp<int64_t>(limit_ - used_, 0, wanted);
    used_ += n;
    return n;
  }
  void return_helpers(int64_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= n;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::atomic<int64_t> limit_;
  std::atomic<int64_t> devices_{0};  // busy devices, one token each
  std::atomic<int64_t> waiting_{0};  // devices waiting for a token
  int64_t used_ = 0;                 // tokens held by devices and helpers
};

// Never destroyed: executor threads still release their tokens while the
// process runs its static destructors (the executors are joined then).
Budget& budget() {
  static Budget* b = new Budget;
  return *b;
}

thread_local bool in_pool_thread = false;

// Persistent helper threads for parallel_for; grown on demand up to the
// budget minus one (the caller always works too).
class ThreadPool {
 public:
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }

  void ensure_threads(size_t n) {
    std::lock_guard<std::mutex> lock(mutex_);
    while (threads_.size() < n) threads_.emplace_back([this] { loop(); });
  }

  void submit(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(job));
      queued_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    in_pool_thread = true;
    for (;;) {
      std::function<void()> job;
      // See Note [Spin before sleeping].
      detail::spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
        if (stop_ && jobs_.empty()) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      job();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::atomic<size_t> queued_{0};  // jobs_.size(), read without the lock
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

ThreadPool& pool() {
  static ThreadPool p;
  return p;
}

// Counts the ranges of one parallel_for still running, and keeps the
// first exception.
struct Completion {
  std::mutex mutex;
  std::condition_variable cv;
  std::atomic<int64_t> pending{0};  // written under the mutex
  std::exception_ptr error;

  // Takes the helper's exception under the lock and leaves `e` empty, so
  // the helper drops no reference to it after the caller may have woken
  // (libstdc++'s reference counts are invisible to ThreadSanitizer).
  void finish(std::exception_ptr& e) {
    std::lock_guard<std::mutex> lock(mutex);
    if (e && !error) error = std::move(e);
    e = nullptr;
    if (pending.fetch_sub(1, std::memory_order_acq_rel) == 1) cv.notify_all();
  }

  // Returns once every helper has left finish(): spinning first (Note [Spin
  // before sleeping]), then under the lock, which the last helper holds
  // until it no longer touches this object.
  void wait() {
    detail::spin_until([&] { return pending.load(std::memory_order_acquire) == 0; });
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [&] { return pending.load(std::memory_order_relaxed) == 0; });
  }
};

}  // namespace

void set_num_threads(int64_t n) {
  TANDEM_CHECK(n >= 1, "set_num_threads: expected at least 1 thread, got ", n);
  budget().set_limit(n);
}

int64_t num_threads() { return budget().limit(); }

int64_t available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return std::max<int64_t>(1, CPU_COUNT(&set));
  }
  // More CPUs than a cpu_set_t holds (or no affinity support).
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

int64_t intra_op_threads() { return in_pool_thread ? 1 : budget().share(); }

void parallel_for(int64_t begin,
                  int64_t end,
                  int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn) {
  if (begin >= end) return;
  const int64_t n = end - begin;
  const int64_t max_ranges =
      (n + std::max<int64_t>(grain, 1) - 1) / std::max<int64_t>(grain, 1);
  const int64_t wanted = std::min(intra_op_threads(), max_ranges);
  const int64_t helpers = wanted > 1 ? budget().take_helpers(wanted - 1) : 0;
  if (helpers == 0) {
    fn(begin, end);
    return;
  }
  const int64_t ranges = helpers + 1;
  // Only as many threads as are ever asked for at once: a huge budget
  // (--threads 1000) costs nothing until the work is there.
  pool().ensure_threads(static_cast<size_t>(helpers));
  const int64_t step = (n + ranges - 1) / ranges;
  Completion done;
  done.pending.store(ranges - 1, std::memory_order_relaxed);
  for (int64_t r = 1; r < ranges; ++r) {
    const int64_t b = begin + r * step, e = std::min(end, b + step);
    pool().submit([&fn, &done, b, e] {
      std::exception_ptr error;
      try {
        if (b < e) fn(b, e);
      } catch (...) {
        error = std::current_exception();
      }
      done.finish(error);
    });
  }
  std::exception_ptr first;
  try {
    fn(begin, std::min(end, begin + step));
  } catch (...) {
    first = std::current_exception();
  }
  done.wait();
  budget().return_helpers(helpers);
  if (first) std::rethrow_exception(first);
  if (done.error) std::rethrow_exception(done.error);
}

namespace detail {

BusyDeviceScope::BusyDeviceScope() { budget().acquire_device(); }
BusyDeviceScope::~BusyDeviceScope() { budget().release_device(); }

bool in_intra_op_worker() { return in_pool_thread; }

int64_t busy_devices() { return budget().devices(); }

}  // namespace detail
}  // namespace tandem
