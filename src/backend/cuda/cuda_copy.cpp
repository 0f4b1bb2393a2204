// Copies between the host and GPUs, and between GPUs.
//
// Host to GPU: queued on the GPU's stream; see Note [Copies from the host].
// GPU to host: queued on the GPU's stream, then waited for, also with
// non_blocking (see the Note).
// GPU to GPU: the copy is queued on the source's stream after the
// destination's earlier work, and the destination's later work waits for
// it. Both blocks are thus in use, in stream order, exactly while the copy
// runs, which keeps the allocator's stream-ordered reuse safe on both GPUs.
// Those waits and the copy are queued under cross_gpu_mutex() (Note [Waits
// between GPUs] in cuda_context.cpp), never inside an NCCL group launch.
// Peer access is enabled for each pair that supports it (NVLink or PCIe
// P2P); otherwise CUDA routes the copy through the host.
#include <array>
#include <mutex>

#include "backend/cuda/cuda_context.h"
#include "backend/cuda/pinned_host_allocator.h"
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
  const std::lock_guard<std::mutex> lock(cuda::cross_gpu_mutex());
  cuda::prepare(dst_device);
  stream_wait(src_stream, dst_stream);
  cuda::prepare(src_device);
  TANDEM_CUDA_CHECK(cudaMemcpyPeerAsync(
      dst, dst_device.index(), src, src_device.index(), nbytes, src_stream));
  stream_wait(dst_stream, src_stream);
}

// Note [Copies from the host]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// cudaMemcpyAsync from pageable memory (the CPU allocator's) is done with
// the source when it returns: the DMA engine can only read page-locked
// memory, so the driver first copies the source into its own pinned
// staging buffers, waiting if it must (CUDA runtime API, "API
// synchronization behavior": such a transfer "might be synchronous with
// respect to host"; pageable memory is "staged to pinned memory"). The
// caller may free or overwrite the source at once, with or without
// non_blocking; PyTorch's non_blocking copies from pageable memory rely on
// the same.
//
// From pinned memory (the pinned host allocator's), the DMA engine reads
// the source while the copy runs, after the call has returned:
// - non_blocking: the copy is left running. An event recorded after it
//   keeps the source block from being handed out again before it is done
//   (Note [Pinned blocks and pending copies] in pinned_host_allocator.cpp),
//   so the tensor may be dropped at once. Writing into the source tensor
//   before the copy is done (cuda::synchronize) changes what is copied, as
//   in PyTorch.
// - otherwise: the stream is waited for, so the source may be reused on
//   return, as after a copy from pageable memory.
// Other page-locked memory (from_blob over the caller's cudaHostAlloc) is
// not known to be pinned and is treated as pageable: the caller keeps it
// alive and unchanged until the copy is done.
//
// A copy to the host always waits. PyTorch's x.to("cpu", non_blocking=True)
// returns a pinned tensor that the copy fills later, which is read before
// a synchronize at the reader's peril; tandem's to() makes a pageable
// tensor, which the copy must finish filling before anyone reads it.
void copy_from_host(
    void* dst, Device dst_device, const void* src, size_t nbytes, bool non_blocking) {
  cudaStream_t stream = cuda::prepare(dst_device);
  TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, stream));
  if (non_blocking) {
    cuda::record_pinned_use(src, stream, dst_device.index());
  } else if (cuda::is_pinned_host_memory(src)) {
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
}

}  // namespace

void cuda_copy_bytes(void* dst,
                     Device dst_device,
                     const void* src,
                     Device src_device,
                     size_t nbytes,
                     bool non_blocking) {
  if (nbytes == 0) return;
  if (dst_device.is_cpu()) {
    cudaStream_t stream = cuda::prepare(src_device);
    TANDEM_CUDA_CHECK(cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToHost, stream));
    TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
  } else if (src_device.is_cpu()) {
    copy_from_host(dst, dst_device, src, nbytes, non_blocking);
  } else if (src_device == dst_device) {
    cudaStream_t stream = cuda::prepare(dst_device);
    TANDEM_CUDA_CHECK(
        cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, stream));
  } else {
    copy_between_gpus(dst, dst_device, src, src_device, nbytes);
  }
}

}  // namespace tandem::backend
