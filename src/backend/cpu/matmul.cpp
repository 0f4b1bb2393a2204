// STUB: owned by a helper, to be replaced.
#include "backend/cpu/cpu_kernels.h"

namespace tandem::backend::cpu {

void gemm(const Tensor&, const Tensor&, const Tensor&, double, double) {
  throw NotImplementedError("gemm: not implemented yet");
}

void bmm(const Tensor&, const Tensor&, const Tensor&) {
  throw NotImplementedError("bmm: not implemented yet");
}

}  // namespace tandem::backend::cpu
