#include "tandem/nn/modules/container/functional.h"

#include "tandem/core/error.h"

namespace tandem::nn {

FunctionalImpl::FunctionalImpl(Function function) : function_(std::move(function)) {
  TANDEM_CHECK(function_ != nullptr, "Functional: the function is empty");
}

Tensor FunctionalImpl::forward(Tensor input) { return function_(std::move(input)); }

void FunctionalImpl::pretty_print(std::ostream& stream) const {
  stream << "Functional()";
}

}  // namespace tandem::nn
