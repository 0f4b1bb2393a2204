// The CUDA runtime as tandem uses it: errors, how many GPUs there are, and
// one stream per GPU.
#include "backend/cuda/cuda_context.h"

#include <array>
#include <atomic>
#include <mutex>

#include "backend/cuda_backend.h"
#include "tandem/core/cuda.h"
#include "tandem/core/error.h"

namespace tandem::backend {

namespace cuda {

void throw_cuda_error(cudaError_t status, const char* what, const char* file, int line) {
  // Take the error off the thread so the next call does not see it again
  // (sticky errors, like a kernel fault, stay and say so at the next call).
  (void)cudaGetLastError();
  throw Error(detail::str("CUDA error in ",
                          what,
                          " (",
                          file,
                          ":",
                          line,
                          "): ",
                          cudaGetErrorName(status),
                          ": ",
                          cudaGetErrorString(status)));
}

namespace {

constexpr int kMaxDevices = 64;

// The device this thread last made current through prepare(), so that a
// run of ops on one GPU costs no cudaSetDevice call.
thread_local int current_index = -1;

struct Streams {
  std::mutex mutex;  // held while a stream is made
  std::array<std::atomic<cudaStream_t>, kMaxDevices> streams{};
};

Streams& streams() {
  static auto* s = new Streams();  // never destroyed: used until exit
  return *s;
}

void check_index(Device device) {
  TANDEM_CHECK(device.is_cuda(), "expected a CUDA device, got ", device);
  const int count = cuda_device_count();
  if (device.index() >= count) {
    throw Error(detail::str(device,
                            " does not exist: ",
                            count == 0
                                ? std::string("this machine has no GPU")
                                : detail::str("there are ", count, " CUDA devices"),
                            " (see tandem devices)"));
  }
}

}  // namespace

cudaStream_t stream_of(Device device) {
  if (device.is_cuda() && device.index() < kMaxDevices) {
    // A stream is made once and never changes: read it without the lock.
    if (cudaStream_t made =
            streams().streams[device.index()].load(std::memory_order_acquire))
      return made;
  }
  check_index(device);
  Streams& s = streams();
  const int index = device.index();
  std::lock_guard<std::mutex> lock(s.mutex);
  if (s.streams[index].load(std::memory_order_relaxed) == nullptr) {
    int previous = 0;
    TANDEM_CUDA_CHECK(cudaGetDevice(&previous));
    TANDEM_CUDA_CHECK(cudaSetDevice(index));
    cudaStream_t stream = nullptr;
    // Non-blocking: never serialised with the legacy default stream that
    // other libraries in the process may use.
    cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    TANDEM_CUDA_CHECK(cudaSetDevice(previous));
    TANDEM_CUDA_CHECK(status);
    s.streams[index].store(stream, std::memory_order_release);
  }
  return s.streams[index].load(std::memory_order_relaxed);
}

cudaStream_t prepare(Device device) {
  cudaStream_t stream = stream_of(device);
  if (current_index != device.index()) {
    TANDEM_CUDA_CHECK(cudaSetDevice(device.index()));
    current_index = device.index();
  }
  return stream;
}

// Note [Waits between GPUs]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// Two kinds of work make a GPU's stream wait for another GPU's: a copy
// between GPUs (each stream waits for the other's earlier work, see
// cuda_copy.cpp) and an NCCL collective, whose kernels, launched one GPU
// after the other by ncclGroupEnd, wait for one another once running.
// Queued from two threads at once, they could interleave: with the NCCL
// kernel queued on GPU A but not yet on GPU B, a copy between A and B makes
// B's stream wait for A's, that is for A's NCCL kernel; B's NCCL kernel,
// queued next, runs only after that wait, and A's kernel waits for it: no
// GPU ever moves again. Every such enqueue therefore happens under one
// process-wide mutex, so each lands on the streams whole, before or after
// the other. It lives here, in the layer below both users, so that the
// backend's copies need nothing from above. It is held only while calls
// that queue work return, never while the host waits for a GPU, so no
// thread blocks long on it. Never destroyed: a copy may run during static
// destruction.
std::mutex& cross_gpu_mutex() {
  static auto* mutex = new std::mutex();
  return *mutex;
}

bool allow_tf32() { return tandem::cuda::allow_tf32(); }

}  // namespace cuda

int cuda_device_count() {
  static const int count = [] {
    int n = 0;
    cudaError_t status = cudaGetDeviceCount(&n);
    if (status != cudaSuccess) {
      // No driver, a driver too old for this runtime, or no device: all
      // mean "no GPUs here", which is not an error.
      (void)cudaGetLastError();
      return 0;
    }
    return std::min(n, cuda::kMaxDevices);
  }();
  return count;
}

::tandem::cuda::DeviceProperties cuda_device_properties(int index) {
  cuda::check_index(Device(kCUDA, index));
  cudaDeviceProp prop{};
  TANDEM_CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  ::tandem::cuda::DeviceProperties out;
  out.name = prop.name;
  out.total_memory = static_cast<int64_t>(prop.totalGlobalMem);
  out.multiprocessors = prop.multiProcessorCount;
  out.major = prop.major;
  out.minor = prop.minor;
  return out;
}

void cuda_synchronize(Device device) {
  cudaStream_t stream = cuda::prepare(device);
  TANDEM_CUDA_CHECK(cudaStreamSynchronize(stream));
}

}  // namespace tandem::backend
