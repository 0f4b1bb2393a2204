// Flatten: a forward to tandem::flatten, and its printing.
#include "tandem/nn/modules/flatten.h"

#include "tandem/ops/shape.h"

namespace tandem::nn {

void FlattenImpl::pretty_print(std::ostream& stream) const {
  stream << "Flatten(start_dim=" << options.start_dim()
         << ", end_dim=" << options.end_dim() << ")";
}

Tensor FlattenImpl::forward(const Tensor& input) {
  return flatten(input, options.start_dim(), options.end_dim());
}

}  // namespace tandem::nn
