// tandem::cuda: the public face of the CUDA backend (see tandem/core/cuda.h).
#include "tandem/core/cuda.h"

#include <atomic>

#include "core/device_services.h"
#include "tandem/core/error.h"

namespace tandem::cuda {
namespace {

const detail::DeviceServices& services() { return detail::device_services(kCUDA); }

std::atomic<bool> tf32_allowed{false};

int checked_index(int64_t device, const char* what) {
  TANDEM_CHECK(device >= 0 && device < device_count(),
               what,
               ": no CUDA device ",
               device,
               " (this machine has ",
               device_count(),
               ")");
  return static_cast<int>(device);
}

}  // namespace

bool is_built() { return services().built; }

bool is_available() { return services().device_count() > 0; }

int64_t device_count() { return services().device_count(); }

DeviceProperties get_device_properties(int64_t device) {
  return services().properties(checked_index(device, "get_device_properties"));
}

void synchronize(int64_t device) {
  if (device >= 0) {
    services().synchronize(Device(kCUDA, checked_index(device, "synchronize")));
    return;
  }
  for (int64_t i = 0; i < device_count(); ++i) {
    services().synchronize(Device(kCUDA, static_cast<int>(i)));
  }
}

MemoryStats memory_stats(int64_t device) {
  return services().memory_stats(checked_index(device, "memory_stats"));
}

void reset_peak_memory_stats(int64_t device) {
  services().reset_peak_memory_stats(checked_index(device, "reset_peak_memory_stats"));
}

void empty_cache() { services().empty_cache(); }

HostMemoryStats host_memory_stats() { return services().pinned_memory_stats(); }

void set_allow_tf32(bool allow) { tf32_allowed.store(allow, std::memory_order_relaxed); }

bool allow_tf32() { return tf32_allowed.load(std::memory_order_relaxed); }

}  // namespace tandem::cuda
