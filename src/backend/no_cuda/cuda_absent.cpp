// The CUDA backend in a build without CUDA: no device table, so no
// services registered either, and core answers for kCUDA itself (no GPUs,
// and a clear error for anything that would need one).
#include "backend/cuda_backend.h"

namespace tandem::backend {

const Kernels* cuda_kernel_table() { return nullptr; }

}  // namespace tandem::backend
