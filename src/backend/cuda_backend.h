// Private: what the rest of tandem asks of the CUDA backend. backend/cuda/
// implements it; in a build without CUDA, backend/no_cuda/ does (no GPUs,
// and a clear error for anything that needs one). Nothing here includes a
// CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tandem/core/allocator.h"
#include "tandem/core/device.h"

namespace tandem::backend {

struct Kernels;

/// Whether this build has the CUDA backend.
bool cuda_built();

/// The GPUs visible to this process: 0 without the backend, without a driver
/// (CUDA's "driver version is insufficient") or without a device.
int cuda_device_count();

struct CudaDeviceProperties {
  std::string name;
  int64_t total_memory = 0;  // bytes
  int multiprocessors = 0;
  int major = 0;  // compute capability
  int minor = 0;
};
CudaDeviceProperties cuda_device_properties(int index);

/// Memory on a CUDA device, ordered on its stream (see cuda_context.h).
DataPtr cuda_allocate(size_t nbytes, Device device);

/// Page-locked host memory of at least `nbytes` from the caching host
/// allocator (pinned_host_allocator.cpp), for Tensor::pin_memory. Throws
/// tandem::Error, saying why, without the backend or a GPU.
DataPtr cuda_pinned_allocate(size_t nbytes);

/// What the pinned host allocator holds; block sizes, not requests
/// (tandem::cuda::host_memory_stats).
struct CudaPinnedMemoryStats {
  int64_t allocations = 0;      // cuda_pinned_allocate calls of more than 0 bytes
  int64_t cache_hits = 0;       // ... served from the cache
  int64_t bytes_in_use = 0;     // blocks held by tensors
  int64_t bytes_cached = 0;     // free blocks, and freed ones a copy still reads
  int64_t bytes_allocated = 0;  // from cudaHostAlloc: in use + cached
};
CudaPinnedMemoryStats cuda_pinned_memory_stats();

/// tandem::cuda::MemoryStats of one GPU (see tandem/core/cuda.h).
struct CudaMemoryStats {
  int64_t allocated_bytes = 0;
  int64_t peak_allocated_bytes = 0;
  int64_t allocations = 0;
  int64_t reserved_bytes = 0;
};
CudaMemoryStats cuda_memory_stats(int index);
void cuda_reset_peak_memory_stats(int index);
void cuda_empty_cache();

/// Copies `nbytes` from `src` on `src_device` to `dst` on `dst_device`, at
/// least one of them a CUDA device. Returns once `dst` is safe to use from
/// the destination's point of view: a copy to the host has finished; a copy
/// to a GPU is ordered before later work on that GPU. `src` may be reused
/// on return, except after a non_blocking copy from pinned host memory,
/// which may still be running (see Note [Copies from the host] in
/// cuda/cuda_copy.cpp).
void cuda_copy_bytes(void* dst,
                     Device dst_device,
                     const void* src,
                     Device src_device,
                     size_t nbytes,
                     bool non_blocking = false);

/// Blocks until the device's queued work is done; throws on a kernel fault.
void cuda_synchronize(Device device);

/// The CUDA kernel table, or null in a build without CUDA.
const Kernels* cuda_kernel_table();

}  // namespace tandem::backend
