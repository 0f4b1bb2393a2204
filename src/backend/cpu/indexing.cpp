// STUB: owned by a helper, to be replaced.
#include "backend/cpu/cpu_kernels.h"

namespace tandem::backend::cpu {

void index_select(const Tensor&, const Tensor&, int64_t, const Tensor&) {
  throw NotImplementedError("index_select: not implemented yet");
}

void index_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {
  throw NotImplementedError("index_add: not implemented yet");
}

void gather(const Tensor&, const Tensor&, int64_t, const Tensor&) {
  throw NotImplementedError("gather: not implemented yet");
}

void scatter_add(const Tensor&, int64_t, const Tensor&, const Tensor&) {
  throw NotImplementedError("scatter_add: not implemented yet");
}

}  // namespace tandem::backend::cpu
