#include "tandem/core/device_guard.h"

#include <unistd.h>

#include "backend/cuda_backend.h"
#include "tandem/core/parallel.h"

namespace tandem {
namespace {
thread_local Device current = Device(kCPU);
}  // namespace

Device current_device() { return current; }

DeviceGuard::DeviceGuard(Device device) : previous_(current) { current = device; }
DeviceGuard::~DeviceGuard() { current = previous_; }

int64_t device_count(DeviceType type) {
  return type == kCPU ? num_threads() : backend::cuda_device_count();
}

std::vector<DeviceInfo> list_devices() {
  const int64_t memory =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  std::vector<DeviceInfo> out;
  for (int64_t i = 0; i < device_count(kCPU); ++i) {
    out.push_back(DeviceInfo{Device(kCPU, static_cast<int>(i)), "cpu", memory, 1});
  }
  for (int i = 0; i < backend::cuda_device_count(); ++i) {
    const auto p = backend::cuda_device_properties(i);
    out.push_back(
        DeviceInfo{Device(kCUDA, i), p.name, p.total_memory, p.multiprocessors});
  }
  return out;
}

}  // namespace tandem
