// STUB: owned by a helper, to be replaced.
#include "tandem/ops/loss.h"

namespace tandem {

Tensor mse_loss(const Tensor&, const Tensor&, Reduction) {
  throw NotImplementedError("mse_loss: not implemented yet");
}

Tensor nll_loss(const Tensor&, const Tensor&, const Tensor&, Reduction, int64_t) {
  throw NotImplementedError("nll_loss: not implemented yet");
}

Tensor cross_entropy(const Tensor&, const Tensor&, const Tensor&, Reduction, int64_t, double) {
  throw NotImplementedError("cross_entropy: not implemented yet");
}

}  // namespace tandem
