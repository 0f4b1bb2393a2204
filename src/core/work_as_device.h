// Private: the calling thread working for a CPU device as that device's
// executor thread would (the autograd engine's caller, Note [Engine
// scheduling]).
#pragma once

#include "tandem/core/cpu_budget.h"
#include "tandem/core/device.h"
#include "tandem/core/device_guard.h"

namespace tandem::detail {

/// Makes the calling thread, for its scope, the worker of `device` (a CPU
/// device): the device is current, it counts as a busy device of the core
/// budget, and in_executor_thread() holds, so parallelism nested inside
/// treats it as the device's own worker and never hands work to the
/// device's executor (which must not run the same work meanwhile). Scopes
/// do not nest: they are opened only where in_executor_thread() was false.
class WorkAsDeviceScope {
 public:
  explicit WorkAsDeviceScope(Device device);
  ~WorkAsDeviceScope();
  WorkAsDeviceScope(const WorkAsDeviceScope&) = delete;
  WorkAsDeviceScope& operator=(const WorkAsDeviceScope&) = delete;

 private:
  BusyDeviceScope busy_;  // first: counted before the device is current
  DeviceGuard guard_;
};

}  // namespace tandem::detail
