// Activation modules: forwards to the activation ops, and their printing.
#include "tandem/nn/modules/activation.h"

#include <utility>

#include "tandem/core/error.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/factory.h"

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

namespace {

// ", inplace=true" when set, as LibTorch prints it.
const char* inplace_suffix(bool inplace) { return inplace ? ", inplace=true" : ""; }

}  // namespace

void LeakyReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "LeakyReLU(negative_slope=" << options.negative_slope()
         << inplace_suffix(options.inplace()) << ")";
}

Tensor LeakyReLUImpl::forward(Tensor input) {
  if (options.inplace()) return leaky_relu_(input, options.negative_slope());
  return leaky_relu(input, options.negative_slope());
}

void ELUImpl::pretty_print(std::ostream& stream) const {
  stream << "ELU(alpha=" << options.alpha() << inplace_suffix(options.inplace()) << ")";
}

Tensor ELUImpl::forward(Tensor input) {
  if (options.inplace()) return elu_(input, options.alpha());
  return elu(input, options.alpha());
}

void SELUImpl::pretty_print(std::ostream& stream) const {
  stream << "SELU(" << (options.inplace() ? "inplace=true" : "") << ")";
}

Tensor SELUImpl::forward(Tensor input) {
  if (options.inplace()) return selu_(input);
  return selu(input);
}

Tensor SiLUImpl::forward(const Tensor& input) { return silu(input); }

Tensor MishImpl::forward(const Tensor& input) { return mish(input); }

SoftplusImpl::SoftplusImpl(const SoftplusOptions& options) : options(options) { reset(); }

void SoftplusImpl::reset() {
  TANDEM_CHECK(options.beta() != 0, "Softplus: beta must be non-zero, got 0");
}

void SoftplusImpl::pretty_print(std::ostream& stream) const {
  stream << "Softplus(beta=" << options.beta() << ", threshold=" << options.threshold()
         << ")";
}

Tensor SoftplusImpl::forward(const Tensor& input) {
  return softplus(input, options.beta(), options.threshold());
}

HardtanhImpl::HardtanhImpl(const HardtanhOptions& options) : options(options) { reset(); }

void HardtanhImpl::reset() {
  TANDEM_CHECK(options.max_val() > options.min_val(),
               "Hardtanh: max_val must be greater than min_val, got min_val=",
               options.min_val(),
               " and max_val=",
               options.max_val());
}

void HardtanhImpl::pretty_print(std::ostream& stream) const {
  stream << "Hardtanh(min_val=" << options.min_val() << ", max_val=" << options.max_val()
         << inplace_suffix(options.inplace()) << ")";
}

Tensor HardtanhImpl::forward(Tensor input) {
  if (options.inplace()) return hardtanh_(input, options.min_val(), options.max_val());
  return hardtanh(input, options.min_val(), options.max_val());
}

PReLUImpl::PReLUImpl(const PReLUOptions& options) : options(options) { reset(); }

void PReLUImpl::reset() {
  TANDEM_CHECK(options.num_parameters() >= 1,
               "PReLU: num_parameters must be at least 1, got ",
               options.num_parameters());
  weight = register_parameter("weight", full({options.num_parameters()}, options.init()));
}

void PReLUImpl::pretty_print(std::ostream& stream) const {
  stream << "PReLU(num_parameters=" << options.num_parameters() << ")";
}

Tensor PReLUImpl::forward(const Tensor& input) { return prelu(input, weight); }

Tensor LogSigmoidImpl::forward(const Tensor& input) { return log_sigmoid(input); }

Tensor SoftsignImpl::forward(const Tensor& input) { return softsign(input); }

}  // namespace tandem::nn
