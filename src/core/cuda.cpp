// tandem::cuda: the public face of the CUDA backend (see tandem/core/cuda.h).
#include "tandem/core/cuda.h"

#include <atomic>

#include "backend/cuda_backend.h"
#include "tandem/core/error.h"

namespace tandem::cuda {
namespace {

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

bool is_built() { return backend::cuda_built(); }

bool is_available() { return backend::cuda_device_count() > 0; }

int64_t device_count() { return backend::cuda_device_count(); }

DeviceProperties get_device_properties(int64_t device) {
  auto p =
      backend::cuda_device_properties(checked_index(device, "get_device_properties"));
  return DeviceProperties{p.name, p.total_memory, p.multiprocessors, p.major, p.minor};
}

void synchronize(int64_t device) {
  if (device >= 0) {
    backend::cuda_synchronize(Device(kCUDA, checked_index(device, "synchronize")));
    return;
  }
  for (int64_t i = 0; i < device_count(); ++i) {
    backend::cuda_synchronize(Device(kCUDA, static_cast<int>(i)));
  }
}

MemoryStats memory_stats(int64_t device) {
  auto s = backend::cuda_memory_stats(checked_index(device, "memory_stats"));
  return MemoryStats{
      s.allocated_bytes, s.peak_allocated_bytes, s.allocations, s.reserved_bytes};
}

void reset_peak_memory_stats(int64_t device) {
  backend::cuda_reset_peak_memory_stats(checked_index(device, "reset_peak_memory_stats"));
}

void empty_cache() { backend::cuda_empty_cache(); }

HostMemoryStats host_memory_stats() {
  auto s = backend::cuda_pinned_memory_stats();
  return HostMemoryStats{
      s.allocations, s.cache_hits, s.bytes_in_use, s.bytes_cached, s.bytes_allocated};
}

void set_allow_tf32(bool allow) { tf32_allowed.store(allow, std::memory_order_relaxed); }

bool allow_tf32() { return tf32_allowed.load(std::memory_order_relaxed); }

}  // namespace tandem::cuda
