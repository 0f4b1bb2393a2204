// tandem::nn::functional: the stateless forms of the layers, with LibTorch's
// option structs, as torch::nn::functional. Each is a thin forward to the
// op of the same name in tandem:: (tandem::relu, tandem::cross_entropy, ...),
// which can also be called directly with plain arguments.
//
//   namespace F = tandem::nn::functional;
//   auto h = F::relu(F::linear(x, w, b));
//   auto p = F::log_softmax(h, F::LogSoftmaxFuncOptions(1));
//   auto d = F::dropout(h, F::DropoutFuncOptions().p(0.5).training(is_training()));
//   auto loss = F::cross_entropy(h, y,
//   F::CrossEntropyFuncOptions().label_smoothing(0.1));
#pragma once

#include "tandem/core/tensor.h"
#include "tandem/nn/options/activation.h"
#include "tandem/nn/options/dropout.h"
#include "tandem/nn/options/embedding.h"
#include "tandem/nn/options/loss.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/loss.h"

namespace tandem::nn::functional {

inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}) {
  return tandem::linear(input, weight, bias);
}

inline Tensor embedding(const Tensor& input,
                        const Tensor& weight,
                        const EmbeddingFuncOptions& options = {}) {
  return tandem::embedding(weight, input, options.padding_idx().value_or(-1));
}

inline Tensor relu(Tensor input, const ReLUFuncOptions& options = {}) {
  if (options.inplace()) return tandem::relu_(input);
  return tandem::relu(input);
}

inline Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {}) {
  return tandem::gelu(input, options.approximate());
}

inline Tensor tanh(const Tensor& input) { return tandem::tanh(input); }

inline Tensor sigmoid(const Tensor& input) { return tandem::sigmoid(input); }

inline Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return tandem::softmax(x, options.dim());
}

inline Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return tandem::log_softmax(x, options.dim());
}

inline Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {}) {
  return tandem::dropout(input, options.p(), options.training());
}

inline Tensor mse_loss(const Tensor& input,
                       const Tensor& target,
                       const MSELossFuncOptions& options = {}) {
  return tandem::mse_loss(input, target, options.reduction());
}

inline Tensor nll_loss(const Tensor& input,
                       const Tensor& target,
                       const NLLLossFuncOptions& options = {}) {
  return tandem::nll_loss(
      input, target, options.weight(), options.reduction(), options.ignore_index());
}

inline Tensor cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const CrossEntropyFuncOptions& options = {}) {
  return tandem::cross_entropy(input,
                               target,
                               options.weight(),
                               options.reduction(),
                               options.ignore_index(),
                               options.label_smoothing());
}

}  // namespace tandem::nn::functional
