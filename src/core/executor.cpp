// One persistent thread per device, fed through a queue.
#include "tandem/core/executor.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/spin_wait.h"
#include "tandem/core/device_guard.h"
#include "tandem/core/parallel.h"

namespace tandem {
namespace {

thread_local const Executor* this_thread_executor = nullptr;

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

struct Registry {
  std::mutex mutex;
  std::map<Device, std::unique_ptr<ThreadExecutor>> executors;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

Executor& Executor::of(Device device) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto& slot = r.executors[device];
  if (!slot) slot = std::make_unique<ThreadExecutor>(device);
  return *slot;
}

bool in_executor_thread() {
  // parallel_for's helpers count too: waiting there on other devices could
  // deadlock just the same.
  return this_thread_executor != nullptr || detail::in_intra_op_worker();
}

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
  // Each task keeps its own exception: a future would carry it through the
  // executor's promise, whose last reference may drop on the executor thread
  // after the caller read the exception. That is safe (libstdc++ counts
  // exception references atomically) but those atomics are not instrumented,
  // so ThreadSanitizer would report a race.
  std::vector<std::future<void>> futures;
  futures.reserve(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    futures.push_back(Executor::of(devices[i]).submit([&task, &errors, i] {
      try {
        task(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }));
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

}  // namespace tandem
