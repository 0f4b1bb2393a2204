// Dropout2d: the probability check and a forward that follows the module's
// mode.
#include "tandem/nn/modules/dropout2d.h"

#include "tandem/core/error.h"
#include "tandem/ops/activation.h"

namespace tandem::nn {

Dropout2dImpl::Dropout2dImpl(const Dropout2dOptions& options) : options(options) {
  reset();
}

void Dropout2dImpl::reset() {
  TANDEM_CHECK(options.p() >= 0 && options.p() <= 1,
               "Dropout2d: probability has to be between 0 and 1, but got ",
               options.p());
}

void Dropout2dImpl::pretty_print(std::ostream& stream) const {
  stream << "Dropout2d(p=" << options.p() << ")";
}

Tensor Dropout2dImpl::forward(const Tensor& input) {
  TANDEM_CHECK(input.defined(), "Dropout2d: the input is undefined");
  TANDEM_CHECK(input.dim() == 3 || input.dim() == 4,
               "Dropout2d: expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] ",
               "(batched) input, got shape ",
               input.sizes());
  return dropout2d(input, options.p(), is_training());
}

}  // namespace tandem::nn
