// The current device of a thread, and what devices exist.
//
// DeviceGuard sets the calling thread's current device for a scope (each
// device's executor thread runs with its own device current). The logical
// CPU devices cpu:0, cpu:1, ... all exist; device_count(kCPU) is how many
// the core budget gives one core each (at least 1), which is how many run
// fully in parallel.
//
//   tandem::DeviceGuard guard(tandem::Device("cpu:1"));
//   assert(tandem::current_device() == tandem::Device("cpu:1"));
//   for (const auto& d : tandem::list_devices()) std::cout << d.device << "\n";
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tandem/core/device.h"

namespace tandem {

/// The calling thread's current device (cpu:0 unless a guard says otherwise).
Device current_device();

class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  Device previous_;
};

/// CPU: the number of cores in the budget (see set_num_threads); CUDA: the
/// number of GPUs (0 in a build without CUDA or on a machine without them).
int64_t device_count(DeviceType type);

struct DeviceInfo {
  Device device;
  std::string name;          // "cpu" or the GPU's product name
  int64_t total_memory = 0;  // bytes
  int64_t cores = 0;         // CPU cores in the budget, or GPU multiprocessors
};

/// One entry per CPU core of the budget (cpu:0 ...), then every GPU.
std::vector<DeviceInfo> list_devices();

}  // namespace tandem
