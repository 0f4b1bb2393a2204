// Private: what copies need from the pinned host allocator
// (pinned_host_allocator.cpp; cuda_pinned_allocate in cuda_backend.h hands
// its blocks out). See Note [Pinned blocks and pending copies] there.
//
//   cudaStream_t stream = prepare(gpu);
//   TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream));
//   record_pinned_use(src, stream, gpu.index());  // src's block outlives the copy
#pragma once

#include <cuda_runtime.h>

namespace tandem::backend::cuda {

/// Whether `ptr` points into a block of the pinned host allocator.
bool is_pinned_host_memory(const void* ptr);

/// The work queued on `stream` (of GPU `device`, which must be the current
/// device, as after prepare()) so far reads or writes the pinned block that
/// `ptr` points into: the block is not handed out again before that work
/// is done. Does nothing when `ptr` is not in a pinned block.
void record_pinned_use(const void* ptr, cudaStream_t stream, int device);

}  // namespace tandem::backend::cuda
