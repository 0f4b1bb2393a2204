// LayerNorm: parameters of normalized_shape and the forward.
#include "tandem/nn/modules/layer_norm.h"

#include "tandem/core/error.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/normalization.h"

namespace tandem::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& options) : options(options) {
  reset();
}

void LayerNormImpl::reset() {
  const IntList& shape = options.normalized_shape();
  TANDEM_CHECK(!shape.empty(), "LayerNorm: normalized_shape must not be empty");
  const bool affine = options.elementwise_affine();
  weight = register_parameter("weight", affine ? empty(shape) : Tensor(), affine);
  bias = register_parameter("bias", affine ? empty(shape) : Tensor(), affine);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

void LayerNormImpl::pretty_print(std::ostream& stream) const {
  stream << "LayerNorm(" << options.normalized_shape() << ", eps=" << options.eps()
         << ", elementwise_affine=" << (options.elementwise_affine() ? "true" : "false")
         << ")";
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return layer_norm(input, options.normalized_shape(), weight, bias, options.eps());
}

}  // namespace tandem::nn
