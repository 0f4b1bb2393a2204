// tandem::cuda: the GPUs this process sees, their memory, and pinned host
// memory.
//
// Works in every build: without the CUDA backend (or a GPU, or a driver)
// is_available() is false and device_count() is 0. Nothing here includes a
// CUDA header.
//
//   if (tandem::cuda::is_available()) {
//     auto x = tandem::randn({1024, 1024}).to("cuda:0");
//     tandem::cuda::synchronize();
//     auto s = tandem::cuda::memory_stats(0);
//     std::cout << s.allocated_bytes << " bytes in tensors on cuda:0\n";
//     std::cout << tandem::cuda::host_memory_stats().bytes_in_use << " pinned\n";
//   }
#pragma once

#include <cstdint>
#include <string>

namespace tandem::cuda {

/// Whether this build has the CUDA backend (configure option TANDEM_CUDA).
bool is_built();
/// Whether this build has the CUDA backend and the machine at least one GPU.
bool is_available();
/// The number of GPUs visible (0 when !is_available()).
int64_t device_count();

struct DeviceProperties {
  std::string name;          // e.g. "NVIDIA H200"
  int64_t total_memory = 0;  // bytes
  int multiprocessors = 0;
  int major = 0;  // compute capability major.minor
  int minor = 0;
};
/// Throws tandem::Error for an index outside [0, device_count()).
DeviceProperties get_device_properties(int64_t device);

/// Waits for all work queued on `device` (every GPU when -1); throws if a
/// kernel failed.
void synchronize(int64_t device = -1);

/// tandem's memory on one GPU. Tensors' memory is counted by the bytes they
/// asked for; reserved is what the stream-ordered pool holds from CUDA.
struct MemoryStats {
  int64_t allocated_bytes = 0;       // in live tensors
  int64_t peak_allocated_bytes = 0;  // since start or reset_peak_memory_stats
  int64_t allocations = 0;           // total allocate calls
  int64_t reserved_bytes = 0;        // held by the pool (used + cached)
};
MemoryStats memory_stats(int64_t device);
void reset_peak_memory_stats(int64_t device);
/// Returns the pool's cached, unused memory on every GPU to CUDA.
void empty_cache();

/// tandem's page-locked host memory (Tensor::pin_memory), counted in the
/// allocator's blocks, not the bytes asked for. Freed blocks are cached for
/// reuse and never given back to CUDA (empty_cache() leaves them). All zero
/// without the CUDA backend or before anything is pinned.
struct HostMemoryStats {
  int64_t allocations = 0;      // pin requests of more than 0 bytes
  int64_t cache_hits = 0;       // ... served from the cache
  int64_t bytes_in_use = 0;     // in live pinned tensors
  int64_t bytes_cached = 0;     // free, or freed while a copy still reads them
  int64_t bytes_allocated = 0;  // page-locked from CUDA: in use + cached
};
HostMemoryStats host_memory_stats();

/// float32 matrix products and convolutions on TF32 tensor cores: faster,
/// about 3 decimal digits. Off by default, as in PyTorch.
void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace tandem::cuda
