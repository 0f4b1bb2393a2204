// STUB: owned by a helper, to be replaced.
#include "tandem/ops/activation.h"

namespace tandem {

Tensor softmax(const Tensor&, int64_t) {
  throw NotImplementedError("softmax: not implemented yet");
}

Tensor log_softmax(const Tensor&, int64_t) {
  throw NotImplementedError("log_softmax: not implemented yet");
}

}  // namespace tandem
