// STUB: owned by a helper, to be replaced.
#include "tandem/ops/linalg.h"

namespace tandem {

Tensor mm(const Tensor&, const Tensor&) {
  throw NotImplementedError("mm: not implemented yet");
}

Tensor bmm(const Tensor&, const Tensor&) {
  throw NotImplementedError("bmm: not implemented yet");
}

Tensor matmul(const Tensor&, const Tensor&) {
  throw NotImplementedError("matmul: not implemented yet");
}

Tensor linear(const Tensor&, const Tensor&, const Tensor&) {
  throw NotImplementedError("linear: not implemented yet");
}

}  // namespace tandem
