// Loss modules: forwards to the loss ops with the module's options.
#include "tandem/nn/modules/loss.h"

#include "tandem/core/error.h"
#include "tandem/ops/loss.h"

namespace tandem::nn {

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options.reduction());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : options(options) { reset(); }

void NLLLossImpl::reset() { weight = register_buffer("weight", options.weight()); }

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, weight, options.reduction(), options.ignore_index());
}

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : options(options) {
  reset();
}

void CrossEntropyLossImpl::reset() {
  TANDEM_CHECK(options.label_smoothing() >= 0 && options.label_smoothing() <= 1,
               "CrossEntropyLoss: label_smoothing must be between 0 and 1, got ",
               options.label_smoothing());
  weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input,
                       target,
                       weight,
                       options.reduction(),
                       options.ignore_index(),
                       options.label_smoothing());
}

}  // namespace tandem::nn
