// Private: the CUDA backend's functions, for backend/ itself. The layers
// above reach them through the services of the CUDA device table
// (backend/dispatch.h), and core through its registry, to which
// backend/cuda/cuda_dispatch.cpp hands those same services
// (core/device_services.h); a build without CUDA has no table and
// registers nothing, and core answers for it. Nothing here includes a
// CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tandem/core/allocator.h"
#include "tandem/core/cuda.h"
#include "tandem/core/device.h"

namespace tandem::backend {

struct Kernels;

/// The GPUs visible to this process: 0 without the backend, without a driver
/// (CUDA's "driver version is insufficient") or without a device.
int cuda_device_count();

::tandem::cuda::DeviceProperties cuda_device_properties(int index);

/// Memory on a CUDA device, ordered on its stream (see cuda_context.h).
DataPtr cuda_allocate(size_t nbytes, Device device);

/// Page-locked host memory of at least `nbytes` from the caching host
/// allocator (pinned_host_allocator.cpp), for Tensor::pin_memory. Throws
/// tandem::Error, saying why, without the backend or a GPU.
DataPtr cuda_pinned_allocate(size_t nbytes);

/// What the pinned host allocator holds; block sizes, not requests.
::tandem::cuda::HostMemoryStats cuda_pinned_memory_stats();

::tandem::cuda::MemoryStats cuda_memory_stats(int index);
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

/// The profiler's marks on the device's stream (DeviceServices::queue_mark
/// and queue_mark_times; backend/cuda/queue_marks.cpp).
uint64_t cuda_queue_mark(Device device);
void cuda_queue_mark_times(const uint64_t* marks, size_t count, int64_t* ns);

/// The CUDA device table, or null in a build without CUDA.
const Kernels* cuda_kernel_table();

}  // namespace tandem::backend
