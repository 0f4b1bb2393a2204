// Activation modules: forwards to the activation ops, and their printing.
#include "tandem/nn/modules/activation.h"

#include <utility>

#include "tandem/core/error.h"
#include "tandem/ops/activation.h"

namespace tandem::nn {

void ReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "ReLU(" << (options.inplace() ? "inplace=true" : "") << ")";
}

Tensor ReLUImpl::forward(Tensor input) {
  if (options.inplace()) return relu_(input);
  return relu(input);
}

GELUImpl::GELUImpl(GELUOptions options) : options(std::move(options)) { reset(); }

void GELUImpl::reset() {
  const std::string& approximate = options.approximate();
  TANDEM_CHECK(approximate == "none" || approximate == "tanh",
               "GELU: approximate must be \"none\" or \"tanh\", got \"",
               approximate,
               "\"");
}

void GELUImpl::pretty_print(std::ostream& stream) const {
  stream << "GELU(approximate='" << options.approximate() << "')";
}

Tensor GELUImpl::forward(const Tensor& input) {
  return gelu(input, options.approximate());
}

Tensor TanhImpl::forward(const Tensor& input) { return tanh(input); }

Tensor SigmoidImpl::forward(const Tensor& input) { return sigmoid(input); }

void SoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "Softmax(dim=" << options.dim() << ")";
}

Tensor SoftmaxImpl::forward(const Tensor& input) { return softmax(input, options.dim()); }

void LogSoftmaxImpl::pretty_print(std::ostream& stream) const {
  stream << "LogSoftmax(dim=" << options.dim() << ")";
}

Tensor LogSoftmaxImpl::forward(const Tensor& input) {
  return log_softmax(input, options.dim());
}

}  // namespace tandem::nn
