// Device work time: a running total, per device, of the time spent on the
// device's own share of data-parallel work: a replica's forward in
// parallel_apply and the device's nodes in a multi-device backward. Time a
// device spends waiting for others, and work done elsewhere for it, are not
// counted, and neither is the step's own work that runs on a device
// whatever its share (the sum of the replicas' gradients on the output
// device: StepWorkScope), so the total over one step divided into the rows
// the device got is its speed. DataParallel's automatic shares read it step to step
// (tandem/parallel/shares.h).
//
// On a CUDA device the scope measures the host thread, which queues kernels
// and returns: the total then says how long the launches took, not the GPU.
//
//   const double before = tandem::device_work_seconds("cpu:1");
//   ... one DataParallel step ...
//   const double spent = tandem::device_work_seconds("cpu:1") - before;
#pragma once

#include <chrono>

#include "tandem/core/device.h"

namespace tandem {

/// Seconds of work `device` has recorded since the process started (0 for
/// a device beyond the first 64 of its type, which are not recorded).
double device_work_seconds(Device device);

namespace detail {

/// Adds its lifetime to `device`'s work time, less the time of the
/// StepWorkScopes opened inside it on the same thread.
class DeviceWorkScope {
 public:
  explicit DeviceWorkScope(Device device);
  ~DeviceWorkScope();
  DeviceWorkScope(const DeviceWorkScope&) = delete;
  DeviceWorkScope& operator=(const DeviceWorkScope&) = delete;

 private:
  friend class StepWorkScope;
  Device device_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::duration excluded_{};
  DeviceWorkScope* outer_;  // the thread's scope before this one
};

/// Pauses the DeviceWorkScope open on this thread, if any, for its
/// lifetime: for work that the step needs once, whatever the device's rows
/// (BroadcastBackward's sum onto the original's device). Counted in, it
/// would make that device look slower than its rows make it, and the
/// automatic shares would give it too few.
class StepWorkScope {
 public:
  StepWorkScope() noexcept;
  ~StepWorkScope();
  StepWorkScope(const StepWorkScope&) = delete;
  StepWorkScope& operator=(const StepWorkScope&) = delete;

 private:
  DeviceWorkScope* paused_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace detail
}  // namespace tandem
