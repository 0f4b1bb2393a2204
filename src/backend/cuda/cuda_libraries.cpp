// cuBLAS and cuDNN handles per (thread, GPU), and workspaces for them.
#include "backend/cuda/cuda_libraries.h"

#include <map>
#include <mutex>
#include <vector>

#include "backend/cuda_backend.h"
#include "core/empty_tensor.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor.h"

namespace tandem::backend::cuda {

void throw_cublas_error(cublasStatus_t status,
                        const char* what,
                        const char* file,
                        int line) {
  throw Error(detail::str("cuBLAS error in ",
                          what,
                          " (",
                          file,
                          ":",
                          line,
                          "): ",
                          cublasGetStatusName(status),
                          ": ",
                          cublasGetStatusString(status)));
}

void throw_cudnn_error(cudnnStatus_t status,
                       const char* what,
                       const char* file,
                       int line) {
  throw Error(detail::str("cuDNN error in ",
                          what,
                          " (",
                          file,
                          ":",
                          line,
                          "): ",
                          cudnnGetErrorString(status)));
}

namespace {

// The handles one thread uses on one GPU.
struct Handles {
  cublasHandle_t cublas = nullptr;
  bool cublas_tf32 = false;
  cudnnHandle_t cudnn = nullptr;
};

// Handles are never destroyed: a thread that ends gives its handles back
// here for the next thread, because the last threads of a process may end
// after CUDA has shut down, when destroying a handle can crash.
struct IdleHandles {
  std::mutex mutex;
  std::map<int, std::vector<Handles>> by_device;
};

IdleHandles& idle_handles() {
  static auto* idle = new IdleHandles();  // never destroyed, see above
  return *idle;
}

struct ThreadHandles {
  struct PerDevice {
    Handles handles;
    Tensor workspace;  // uint8 bytes on the device
  };
  std::map<int, PerDevice> devices;

  ~ThreadHandles() {
    IdleHandles& idle = idle_handles();
    std::lock_guard<std::mutex> lock(idle.mutex);
    for (auto& [index, d] : devices) idle.by_device[index].push_back(d.handles);
  }
};

ThreadHandles::PerDevice& handles_of(Device device) {
  thread_local ThreadHandles handles;
  auto [it, added] = handles.devices.try_emplace(device.index());
  if (added) {
    IdleHandles& idle = idle_handles();
    std::lock_guard<std::mutex> lock(idle.mutex);
    auto& pool = idle.by_device[device.index()];
    if (!pool.empty()) {
      it->second.handles = pool.back();
      pool.pop_back();
    }
  }
  return it->second;
}

}  // namespace

cublasHandle_t cublas_handle(Device device) {
  cudaStream_t stream = prepare(device);
  Handles& d = handles_of(device).handles;
  if (d.cublas == nullptr) {
    TANDEM_CUBLAS_CHECK(cublasCreate(&d.cublas));
    TANDEM_CUBLAS_CHECK(cublasSetStream(d.cublas, stream));
    d.cublas_tf32 = !allow_tf32();  // forces the math mode below
  }
  if (d.cublas_tf32 != allow_tf32()) {
    d.cublas_tf32 = allow_tf32();
    TANDEM_CUBLAS_CHECK(cublasSetMathMode(
        d.cublas, d.cublas_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
  }
  return d.cublas;
}

cudnnHandle_t cudnn_handle(Device device) {
  cudaStream_t stream = prepare(device);
  Handles& d = handles_of(device).handles;
  if (d.cudnn == nullptr) {
    TANDEM_CUDNN_CHECK(cudnnCreate(&d.cudnn));
    TANDEM_CUDNN_CHECK(cudnnSetStream(d.cudnn, stream));
  }
  return d.cudnn;
}

void* workspace(Device device, size_t nbytes) {
  auto& d = handles_of(device);
  if (!d.workspace.defined() || static_cast<size_t>(d.workspace.numel()) < nbytes) {
    // Grow only; the old block is freed in stream order.
    d.workspace = detail::make_empty(
        {static_cast<int64_t>(std::max<size_t>(nbytes, 1))}, kUInt8, device);
  }
  return d.workspace.data_ptr();
}

}  // namespace tandem::backend::cuda
