// Copies between the host and GPUs, and between GPUs.
//
// Host to GPU: queued on the GPU's stream. The host memory is pageable (the
// CPU allocator's), so CUDA stages it before cudaMemcpyAsync returns and the
// caller may free or reuse it at once.
// GPU to host: queued on the GPU's stream, then waited for.
// GPU to GPU: the copy is queued on the source's stream after the
// destination's earlier work, and the destination's later work waits for
// it. Both blocks are thus in use, in stream order, exactly while the copy
// runs, which keeps the allocator's stream-ordered reuse safe on both GPUs.
// Peer access is enabled for each pair that supports it (NVLink or PCIe
// P2P); otherwise CUDA routes the copy through the host.
#include <array>
#include <mutex>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda_backend.h"
#include "tandem/core/error.h"

namespace tandem::backend {
namespace {

constexpr int kMaxDevices = 64;

void enable_peer_access_once(int from, int to) {
  static std::mutex mutex;
  static std::array<std::array<bool, kMaxDevices>, kMaxDevices> tried{};
  std::lock_guard<std::mutex> lock(mutex);
  if (tried[from][to]) return;
  tried[from][to] = true;
  int can = 0;
  TANDEM_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) return;
  int previous = 0;
  TANDEM_CUDA_CHECK(cudaGetDevice(&previous));
  TANDEM_CUDA_CHECK(cudaSetDevice(from));
  cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    (void)cudaGetLastError();
    status = cudaSuccess;
  }
  TANDEM_CUDA_CHECK(cudaSetDevice(previous));
  TANDEM_CUDA_CHECK(status);
}

// `waiter` waits for the work queued on `signaller` so far. The current
// device must be the signaller's (its event is made there).
void stream_wait(cudaStream_t waiter, cudaStream_t signaller) {
  cudaEvent_t event = nullptr;
  TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  cudaError_t status = cudaEventRecord(event, signaller);
  if (status == cudaSuccess) status = cudaStreamWaitEvent(waiter, event, 0);
  // Destroying an event that is still pending is allowed: the wait stays.
  (void)cudaEventDestroy(event);
  TANDEM_CUDA_CHECK(status);
}

void copy_between_gpus(
    void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  cudaStream_t dst_stream = cuda::stream_of(dst_device);
  cudaStream_t src_stream = cuda::prepare(src_device);
  enable_peer_access_once(src_device.index(), dst_device.index());
  cuda::prepare(dst_device);
  stream_wait(src_stream, dst_stream);
  cuda::prepare(src_device);
  TANDEM_CUDA_CHECK(cudaMemcpyPeerAsync(
      dst, dst_device.index(), src, src_device.index(), nbytes, src_stream));
  stream_wait(dst_stream, src_stream);
}

}  // namespace

void cuda_copy_bytes(
    void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (nbytes == 0) return;
  if (dst_device.is_cpu()) {
    cudaStream_t stream = cuda::prepare(src_device);
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, stream));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else if (src_device.is_cpu()) {
    cudaStream_t stream = cuda::prepare(dst_device);
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, stream));
  } else if (src_device == dst_device) {
    cudaStream_t stream = cuda::prepare(dst_device);
    TANDEM_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    copy_between_gpus(dst, dst_device, src, src_device, nbytes);
  }
}

}  // namespace tandem::backend
