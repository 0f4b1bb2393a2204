#include "tandem/core/device_guard.h"

#include <unistd.h>

#include "core/device_services.h"

namespace tandem {
namespace {
thread_local Device current = Device(kCPU);
}  // namespace

Device current_device() { return current; }

DeviceGuard::DeviceGuard(Device device) : previous_(current) { current = device; }
DeviceGuard::~DeviceGuard() { current = previous_; }

int64_t device_count(DeviceType type) {
  return detail::device_services(type).device_count();
}

std::vector<DeviceInfo> list_devices() {
  const int64_t memory =
      static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
  std::vector<DeviceInfo> out;
  for (int64_t i = 0; i < device_count(kCPU); ++i) {
    out.push_back(DeviceInfo{Device(kCPU, static_cast<int>(i)), "cpu", memory, 1});
  }
  const detail::DeviceServices& cuda = detail::device_services(kCUDA);
  for (int i = 0; i < cuda.device_count(); ++i) {
    const auto p = cuda.properties(i);
    out.push_back(
        DeviceInfo{Device(kCUDA, i), p.name, p.total_memory, p.multiprocessors});
  }
  return out;
}

}  // namespace tandem
