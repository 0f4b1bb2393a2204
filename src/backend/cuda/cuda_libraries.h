// Private: the cuBLAS and cuDNN handles of a GPU, bound to its stream.
//
// One handle per (thread, device), made on first use: cuBLAS and cuDNN
// handles must not be used by two threads at once, and the engine runs one
// worker per device beside the caller's thread. Every handle queues on the
// device's one stream, so ordering is the stream's.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>

#include "backend/cuda/cuda_context.h"

namespace tandem::backend::cuda {

[[noreturn]] void throw_cublas_error(cublasStatus_t status,
                                     const char* what,
                                     const char* file,
                                     int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status,
                                    const char* what,
                                    const char* file,
                                    int line);

#define TANDEM_CUBLAS_CHECK(expr)                     \
  do {                                                \
    cublasStatus_t tandem_status_ = (expr);           \
    if (tandem_status_ != CUBLAS_STATUS_SUCCESS)      \
      ::tandem::backend::cuda::throw_cublas_error(    \
          tandem_status_, #expr, __FILE__, __LINE__); \
  } while (0)
#define TANDEM_CUDNN_CHECK(expr)                      \
  do {                                                \
    cudnnStatus_t tandem_status_ = (expr);            \
    if (tandem_status_ != CUDNN_STATUS_SUCCESS)       \
      ::tandem::backend::cuda::throw_cudnn_error(     \
          tandem_status_, #expr, __FILE__, __LINE__); \
  } while (0)

/// The calling thread's cuBLAS handle for `device`, on its stream, with
/// TF32 math when allow_tf32() (else pedantic float32). Call after prepare().
cublasHandle_t cublas_handle(Device device);

/// The calling thread's cuDNN handle for `device`, on its stream.
cudnnHandle_t cudnn_handle(Device device);

/// Scratch memory on `device` for cuBLAS / cuDNN workspaces, valid until the
/// next call on this thread for this device (stream order keeps it safe).
void* workspace(Device device, size_t nbytes);

}  // namespace tandem::backend::cuda
