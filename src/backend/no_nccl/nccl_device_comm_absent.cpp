// NCCL among one process's GPUs in a build without it (no CUDA backend, or
// no NCCL found): comm.cpp sees nccl_device_comm_built() false and always
// takes its peer copies and add kernels, so nothing else here is reached.
#include "backend/nccl_device_comm.h"
#include "tandem/core/error.h"

namespace tandem::backend::nccl {

bool nccl_device_comm_built() { return false; }

bool nccl_can_sum(ScalarType) { return false; }

void nccl_broadcast(const std::vector<Tensor>&, size_t, const char* what) {
  TANDEM_INTERNAL_ASSERT(false, what, ": no NCCL in this build");
}

void nccl_reduce_sum(const std::vector<Tensor>&, size_t, const char* what) {
  TANDEM_INTERNAL_ASSERT(false, what, ": no NCCL in this build");
}

}  // namespace tandem::backend::nccl
