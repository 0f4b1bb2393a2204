// One persistent thread per device, fed through a queue.
#include "tandem/core/executor.h"

#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/spin_wait.h"
#include "core/work_as_device.h"
#include "tandem/core/cpu_budget.h"
#include "tandem/core/device_guard.h"
#include "tandem/core/error.h"

namespace tandem {
namespace {

thread_local const Executor* this_thread_executor = nullptr;
// The CPU device this thread works for without being its executor
// (detail::WorkAsDeviceScope), or none.
thread_local std::optional<Device> works_as_device;

// Whether this thread is `device`'s worker: its executor, or a caller
// working for it (detail::WorkAsDeviceScope).
bool works_for(Device device) {
  return (this_thread_executor != nullptr && this_thread_executor->device() == device) ||
         works_as_device == device;
}

class ThreadExecutor final : public Executor {
 public:
  explicit ThreadExecutor(Device device) : device_(device), thread_([this] { loop(); }) {}

  ~ThreadExecutor() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::future<void> submit(std::function<void()> task) override {
    Job job{std::move(task), {}};
    std::future<void> result = job.done.get_future();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.push_back(std::move(job));
      queued_.fetch_add(1, std::memory_order_release);
    }
    cv_.notify_one();
    return result;
  }

  bool is_current_thread() const override { return this_thread_executor == this; }
  Device device() const override { return device_; }

 private:
  struct Job {
    std::function<void()> task;
    std::promise<void> done;
  };

  void loop() {
    this_thread_executor = this;
    // "tandem cpu:1" in top -H, gdb and /proc/<pid>/task/<tid>/comm
    // (bench/balance finds a device's thread by it). At most 15 characters.
    pthread_setname_np(pthread_self(), ("tandem " + device_.str()).substr(0, 15).c_str());
    DeviceGuard guard(device_);
    for (;;) {
      Job job;
      // See Note [Spin before sleeping].
      detail::spin_until([&] { return queued_.load(std::memory_order_acquire) > 0; });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (stop_ && queue_.empty()) return;
        job = std::move(queue_.front());
        queue_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      std::exception_ptr error;
      {
        // A GPU's thread only queues kernels: it takes no share of the cores.
        std::optional<detail::BusyDeviceScope> busy;
        if (device_.is_cpu()) busy.emplace();
        try {
          job.task();
        } catch (...) {
          error = std::current_exception();
        }
      }
      // The device's token is back before the waiter wakes, so a caller of
      // run_on_devices sees every device idle again once it returns.
      if (error) {
        job.done.set_exception(error);
      } else {
        job.done.set_value();
      }
    }
  }

  Device device_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  std::atomic<size_t> queued_{0};  // queue_.size(), read without the lock
  bool stop_ = false;
  std::thread thread_;  // last: starts after the members it uses exist
};

// Note [Finding a device's executor]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Every hand-off looks up an executor (the engine once per node that
// crosses a device), so the lookup takes no lock: the executors of the
// first kDirectDevices devices of each type sit in a table of atomic
// pointers, read with one acquire load once made. Making one takes the
// registry's lock (a thread is started once per device), and so does
// every lookup of a device past the table, which only machines with more
// logical devices than that reach.
constexpr int kDirectDevices = 256;

struct Registry {
  std::array<std::array<std::atomic<ThreadExecutor*>, kDirectDevices>, kNumDeviceTypes>
      direct{};
  std::mutex mutex;
  std::map<Device, std::unique_ptr<ThreadExecutor>> executors;  // owns them all
};

Registry& registry() {
  static Registry r;
  return r;
}

// Note [Work shared with other devices]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// parallel_for_on_devices lends work to other devices' executors, which
// may be busy with a task of their own or waiting for a token of the
// budget (held, perhaps, by the very thread that asks for help). So the
// items are not split up front: every thread claims chunks from a shared
// counter until none are left, and the caller waits only for chunks that
// are claimed, which are running and never block. A helper that starts
// late finds nothing to do and only drops its reference to this state. It
// never touches `fn` then: the caller's `fn` is read only after a claim
// succeeds, and the caller returns only after every claimed chunk ended.
class SharedRange {
 public:
  SharedRange(int64_t begin,
              int64_t end,
              int64_t chunk,
              const std::function<void(int64_t, int64_t)>& fn)
      : end_(end), total_(end - begin), chunk_(chunk), fn_(&fn), next_(begin) {}

  // Claims chunks and runs them (parallel_for) until none are left.
  void work() {
    for (;;) {
      const int64_t first = next_.fetch_add(chunk_, std::memory_order_relaxed);
      if (first >= end_) return;
      const int64_t last = std::min(end_, first + chunk_);
      std::exception_ptr error;
      try {
        parallel_for(first, last, /*grain=*/1, *fn_);
      } catch (...) {
        error = std::current_exception();
      }
      finish(last - first, error);
    }
  }

  // Returns once every item ran; rethrows the first exception.
  void wait() {
    detail::spin_until([&] { return done_.load(std::memory_order_acquire) == total_; });
    std::exception_ptr error;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [&] { return done_.load(std::memory_order_acquire) == total_; });
      error = std::move(error_);
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  // The exception moves into error_ under the lock, so no thread but the
  // caller holds a reference to it (see run_on_devices on why).
  void finish(int64_t items, std::exception_ptr& error) {
    if (error) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::move(error);
      error = nullptr;
    }
    if (done_.fetch_add(items, std::memory_order_acq_rel) + items == total_) {
      std::lock_guard<std::mutex> lock(mutex_);
      cv_.notify_all();
    }
  }

  const int64_t end_;
  const int64_t total_;
  const int64_t chunk_;                              // items per claim
  const std::function<void(int64_t, int64_t)>* fn_;  // see the Note
  std::atomic<int64_t> next_;                        // first unclaimed item
  std::atomic<int64_t> done_{0};                     // items that ran
  std::mutex mutex_;
  std::condition_variable cv_;
  std::exception_ptr error_;  // the first failure, under mutex_
};

}  // namespace

Executor& Executor::of(Device device) {
  Registry& r = registry();
  std::atomic<ThreadExecutor*>* direct =
      device.index() < kDirectDevices ? &r.direct[static_cast<size_t>(device.type())]
                                                 [static_cast<size_t>(device.index())]
                                      : nullptr;
  if (direct != nullptr) {
    if (ThreadExecutor* e = direct->load(std::memory_order_acquire)) return *e;
  }
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.executors[device];
  if (!slot) slot = std::make_unique<ThreadExecutor>(device);
  if (direct != nullptr) direct->store(slot.get(), std::memory_order_release);
  return *slot;
}

bool in_executor_thread() {
  // parallel_for's helpers count too: waiting there on other devices could
  // deadlock just the same.
  return this_thread_executor != nullptr || works_as_device.has_value() ||
         detail::in_intra_op_worker();
}

namespace detail {

WorkAsDeviceScope::WorkAsDeviceScope(Device device) : guard_(device) {
  TANDEM_INTERNAL_ASSERT(device.is_cpu(), "WorkAsDeviceScope on ", device);
  TANDEM_INTERNAL_ASSERT(!works_as_device, "WorkAsDeviceScope inside another");
  works_as_device = device;
}

WorkAsDeviceScope::~WorkAsDeviceScope() { works_as_device.reset(); }

}  // namespace detail

std::vector<std::exception_ptr> run_on_devices(const std::vector<Device>& devices,
                                               const std::function<void(size_t)>& task) {
  std::vector<std::exception_ptr> errors(devices.size());
  if (in_executor_thread() || devices.size() == 1) {
    for (size_t i = 0; i < devices.size(); ++i) {
      try {
        DeviceGuard guard(devices[i]);
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
    return errors;
  }
  // The caller's own device (a CPU device listed once) is worked by the
  // caller, as its executor would (detail::WorkAsDeviceScope): handing it
  // over and sleeping would wake that executor and leave a third thread
  // to place on the cores each time.
  const Device here = current_device();
  const auto first = std::find(devices.begin(), devices.end(), here);
  const bool listed_once = first != devices.end() &&
                           std::find(first + 1, devices.end(), here) == devices.end();
  const size_t own = here.is_cpu() && listed_once
                         ? static_cast<size_t>(first - devices.begin())
                         : devices.size();  // none
  // Each task keeps its own exception: a future would carry it through the
  // executor's promise, whose last reference may drop on the executor thread
  // after the caller read the exception. That is safe (libstdc++ counts
  // exception references atomically) but those atomics are not instrumented,
  // so ThreadSanitizer would report a race.
  std::vector<std::future<void>> futures;
  futures.reserve(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    if (i == own) continue;
    futures.push_back(Executor::of(devices[i]).submit([&task, &errors, i] {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }));
  }
  if (own < devices.size()) {
    try {
      const detail::WorkAsDeviceScope worker(here);
      task(own);
    } catch (...) {
      errors[own] = std::current_exception();
    }
  }
  // A short spin first (Note [Spin before sleeping]): replicas' forwards
  // often end within microseconds of each other.
  detail::spin_until([&] {
    for (auto& f : futures) {
      if (f.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return false;
    }
    return true;
  });
  for (auto& f : futures) f.wait();
  return errors;
}

void parallel_for_on_devices(int64_t begin,
                             int64_t end,
                             const std::vector<Device>& devices,
                             const std::function<void(int64_t, int64_t)>& fn) {
  if (begin >= end) return;
  // A thread outside the executors holds no token of the budget: it hands
  // all the work out and waits, as run_on_devices does.
  const bool caller_works = in_executor_thread();
  const int64_t own = caller_works ? 1 : 0;
  const int64_t most = std::min(num_threads(), end - begin) - own;
  std::vector<Executor*> helpers;
  for (Device d : devices) {
    if (static_cast<int64_t>(helpers.size()) == most) break;
    if (!d.is_cpu()) continue;
    Executor& e = Executor::of(d);
    // This thread's own device needs no helper: this thread is its worker
    // (its executor, or a caller working for it, whose executor is idle by
    // contract and would be a third thread on the cores).
    if (works_for(d) || std::find(helpers.begin(), helpers.end(), &e) != helpers.end()) {
      continue;
    }
    helpers.push_back(&e);
  }
  // Nobody to share with, or one helper instead of a caller that could
  // have done it all: no hand-off.
  if (static_cast<int64_t>(helpers.size()) + own < 2) {
    parallel_for(begin, end, /*grain=*/1, fn);
    return;
  }
  // Each thread's share of the budget once all of them work: a caller
  // that started first and took pool helpers for its chunks would keep the
  // helpers' executors waiting for a token.
  const int64_t workers = static_cast<int64_t>(helpers.size()) + own;
  const int64_t chunk = std::max<int64_t>(1, num_threads() / workers);
  auto shared = std::make_shared<SharedRange>(begin, end, chunk, fn);
  // The futures are dropped: a helper reports through `shared`.
  for (Executor* e : helpers) e->submit([shared] { shared->work(); });
  if (caller_works) shared->work();
  shared->wait();
}

}  // namespace tandem
