// GPU memory for tensors: CUDA's stream-ordered pool (cudaMallocAsync), with
// tandem's statistics.
//
// Each GPU's default memory pool is told to keep what is freed (release
// threshold: unlimited), so after the first steps of a training loop every
// allocation is served from the pool without a system call, like a caching
// allocator. A block is allocated and freed on its GPU's stream; because
// every op on that GPU runs on that stream (cuda_context.h), a freed block
// is reused only by work queued after the last op that used it. Copies
// between GPUs keep both streams in step (cuda_copy.cpp), so the rule holds
// across devices too.
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda_backend.h"
#include "tandem/core/error.h"

namespace tandem::backend {
namespace {

constexpr int kMaxDevices = 64;

struct DeviceCounters {
  std::atomic<int64_t> allocated{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> allocations{0};
};

std::array<DeviceCounters, kMaxDevices>& counters() {
  static auto* c = new std::array<DeviceCounters, kMaxDevices>();
  return *c;
}

void configure_pool_once(int index) {
  static std::array<std::once_flag, kMaxDevices> once;
  std::call_once(once[index], [index] {
    cudaMemPool_t pool = nullptr;
    TANDEM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
    uint64_t keep_everything = UINT64_MAX;
    TANDEM_CUDA_CHECK(
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
  });
}

void record_allocation(DeviceCounters& c, int64_t nbytes) {
  c.allocations.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = c.allocated.fetch_add(nbytes, std::memory_order_relaxed) + nbytes;
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (now > peak &&
         !c.peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

DataPtr cuda_allocate(size_t nbytes, Device device) {
  cudaStream_t stream = cuda::prepare(device);
  const int index = device.index();
  if (nbytes == 0) return DataPtr(nullptr, [](void*) {});
  configure_pool_once(index);
  void* p = nullptr;
  cudaError_t status = cudaMallocAsync(&p, nbytes, stream);
  if (status == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError();
    const ::tandem::cuda::MemoryStats s = cuda_memory_stats(index);
    throw OutOfMemoryError(detail::str("CUDA out of memory on ",
                                       device,
                                       ": tried to allocate ",
                                       nbytes,
                                       " bytes; ",
                                       s.allocated_bytes,
                                       " bytes are in tensors and ",
                                       s.reserved_bytes,
                                       " reserved by tandem"));
  }
  TANDEM_CUDA_CHECK(status);
  DeviceCounters& c = counters()[index];
  record_allocation(c, static_cast<int64_t>(nbytes));
  return DataPtr(p, [stream, &c, nbytes](void* ptr) {
    c.allocated.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
    // A deleter must not throw; at process exit CUDA may be gone already.
    if (cudaFreeAsync(ptr, stream) != cudaSuccess) (void)cudaGetLastError();
  });
}

::tandem::cuda::MemoryStats cuda_memory_stats(int index) {
  TANDEM_CHECK(index >= 0 && index < cuda_device_count(),
               "memory_stats: no CUDA device ",
               index,
               " (this machine has ",
               cuda_device_count(),
               ")");
  DeviceCounters& c = counters()[index];
  ::tandem::cuda::MemoryStats s;
  s.allocated_bytes = c.allocated.load(std::memory_order_relaxed);
  s.peak_allocated_bytes = c.peak.load(std::memory_order_relaxed);
  s.allocations = c.allocations.load(std::memory_order_relaxed);
  cudaMemPool_t pool = nullptr;
  TANDEM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, index));
  uint64_t reserved = 0;
  TANDEM_CUDA_CHECK(
      cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  s.reserved_bytes = static_cast<int64_t>(reserved);
  return s;
}

void cuda_reset_peak_memory_stats(int index) {
  (void)cuda_memory_stats(index);  // checks the index
  DeviceCounters& c = counters()[index];
  c.peak.store(c.allocated.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void cuda_empty_cache() {
  for (int i = 0; i < cuda_device_count(); ++i) {
    // Frees in the pool happen in stream order: wait for them first.
    cuda_synchronize(Device(kCUDA, i));
    cudaMemPool_t pool = nullptr;
    TANDEM_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, i));
    TANDEM_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
  }
}

}  // namespace tandem::backend
