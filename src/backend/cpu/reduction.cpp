// STUB: owned by a helper, to be replaced.
#include "backend/cpu/cpu_kernels.h"

namespace tandem::backend::cpu {

void reduce_dim(ReduceOp, const Tensor&, const Tensor&, const Tensor&, int64_t) {
  throw NotImplementedError("reduce_dim: not implemented yet");
}

}  // namespace tandem::backend::cpu
