// Dropout: the probability check and a forward that follows the module's mode.
#include "tandem/nn/modules/dropout.h"

#include "tandem/core/error.h"
#include "tandem/ops/activation.h"

namespace tandem::nn {

DropoutImpl::DropoutImpl(const DropoutOptions& options) : options(options) { reset(); }

void DropoutImpl::reset() {
  TANDEM_CHECK(options.p() >= 0 && options.p() <= 1,
               "Dropout: probability has to be between 0 and 1, but got ",
               options.p());
}

void DropoutImpl::pretty_print(std::ostream& stream) const {
  stream << "Dropout(p=" << options.p() << ")";
}

Tensor DropoutImpl::forward(const Tensor& input) {
  return dropout(input, options.p(), is_training());
}

}  // namespace tandem::nn
