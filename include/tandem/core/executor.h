// Executors: one persistent worker thread per device.
//
// Work for a device runs on that device's thread, with the device current
// (DeviceGuard) and counted as busy (see tandem/core/cpu_budget.h), so
// replicas on cpu:0 and cpu:1 run at the same time, each with its share of
// the cores. A caller that waits for its own CPU device's work does that
// work itself instead (run_on_devices, the autograd engine). Threads are
// made on first use and live until exit; nothing is created per call.
//
//   std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
//   auto errors = tandem::run_on_devices(devices, [&](size_t i) {
//     outputs[i] = replicas[i]->forward(inputs[i]);
//   });
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <vector>

#include "tandem/core/device.h"

namespace tandem {

class Executor {
 public:
  /// The executor of `device` (made on first use).
  static Executor& of(Device device);

  /// Queues `task` on the device's thread; the future reports its end or
  /// its exception.
  virtual std::future<void> submit(std::function<void()> task) = 0;
  /// Whether the calling thread is this executor's own thread.
  virtual bool is_current_thread() const = 0;
  virtual Device device() const = 0;

 protected:
  Executor() = default;
  virtual ~Executor() = default;
};

/// Whether the calling thread is some device's executor thread, or works for
/// a device as one (a caller running its own device's work).
bool in_executor_thread();

/// Runs task(i) for every i on devices[i], all at once, and waits for all
/// of them; returns one exception_ptr per task (null on success). Each
/// task runs on its device's executor, except that of the caller's current
/// device when that is a CPU device listed once: the caller runs it itself,
/// as the device's worker (the device current and busy, in_executor_thread()
/// true), instead of waking that executor and sleeping. Called from an
/// executor thread (nested parallelism), the tasks run one after another on
/// the calling thread, each under its DeviceGuard, which cannot deadlock.
std::vector<std::exception_ptr> run_on_devices(const std::vector<Device>& devices,
                                               const std::function<void(size_t)>& task);

/// parallel_for over the items [begin, end) with the executors of the CPU
/// devices in `devices` as helpers: fn(b, e) runs for disjoint ranges that
/// cover every item once, on the calling thread (when it is an executor or
/// pool thread: it holds a share of the budget) and on the helpers, never
/// more of them than the core budget allows. Safe to call from an executor
/// thread: it never waits for a helper that has not started. Exceptions
/// propagate (the first one, after every item ran).
void parallel_for_on_devices(int64_t begin,
                             int64_t end,
                             const std::vector<Device>& devices,
                             const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tandem
