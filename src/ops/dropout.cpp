// STUB: owned by a helper, to be replaced.
#include "tandem/ops/activation.h"

namespace tandem {

Tensor dropout(const Tensor&, double, bool) {
  throw NotImplementedError("dropout: not implemented yet");
}

}  // namespace tandem
