// Private: what every CUDA kernel file needs: error checks, the device's
// stream, and launch geometry.
//
// Each GPU has one stream, made on first use; every op on that GPU, from any
// thread, is queued on it, so ops run in the order the host issued them and
// memory freed by one op (cuda_allocator.cpp frees in stream order) is never
// reused before the ops queued earlier are done. A kernel entry point calls
// prepare() with its output's device before anything else:
//
//   void fill(const Tensor& out, Scalar value) {
//     cudaStream_t stream = prepare(out);
//     fill_kernel<<<blocks_for(n), kThreads, 0, stream>>>(...);
//     TANDEM_CUDA_CHECK_LAUNCH("fill");
//   }
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::cuda {

/// Throws tandem::Error: "CUDA error in <what> (<file>:<line>): <message>".
[[noreturn]] void throw_cuda_error(cudaError_t status,
                                   const char* what,
                                   const char* file,
                                   int line);

inline void check(cudaError_t status, const char* what, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, what, file, line);
}

#define TANDEM_CUDA_CHECK(expr) \
  ::tandem::backend::cuda::check((expr), #expr, __FILE__, __LINE__)
// After a <<<...>>> launch: a bad launch configuration throws here.
#define TANDEM_CUDA_CHECK_LAUNCH(kernel_name) \
  ::tandem::backend::cuda::check(cudaGetLastError(), kernel_name, __FILE__, __LINE__)

/// Makes `device` (a CUDA device) current on the calling thread and returns
/// its stream.
cudaStream_t prepare(Device device);
inline cudaStream_t prepare(const Tensor& t) { return prepare(t.device()); }

/// The device's stream without changing the current device.
cudaStream_t stream_of(Device device);

/// Held while queuing work that makes one GPU's stream wait for another's:
/// the waits of a copy between GPUs (cuda_copy.cpp) and the kernels of an
/// NCCL group launch (backend/nccl/nccl_device_comm.cpp). Only around
/// the enqueue calls, never across a wait on the host. See Note [Waits
/// between GPUs] in cuda_context.cpp.
std::mutex& cross_gpu_mutex();

inline constexpr int kThreads = 256;

/// Blocks of kThreads (or `threads`) covering n elements; grid-stride loops
/// cover the rest above the cap.
inline unsigned blocks_for(int64_t n, int threads = kThreads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 65535L * 32));
}

/// Whether float32 matrix products may use TF32 tensor cores (off by
/// default, as in PyTorch; see tandem::cuda::set_allow_tf32).
bool allow_tf32();

}  // namespace tandem::backend::cuda
