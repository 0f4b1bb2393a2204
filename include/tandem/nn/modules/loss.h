// Loss modules: MSELoss, CrossEntropyLoss, NLLLoss, as LibTorch's modules of
// the same names. forward(input, target) calls the loss op; a class-weight
// tensor is kept as the buffer "weight", so to() moves it with the model.
//
//   tandem::nn::CrossEntropyLoss criterion(
//       tandem::nn::CrossEntropyLossOptions().label_smoothing(0.1));
//   auto loss = criterion(logits, targets);       // logits [N, C], targets [N]
//   tandem::nn::MSELoss mse(tandem::nn::MSELossOptions().reduction(tandem::kSum));
#pragma once

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/loss.h"

namespace tandem::nn {

class MSELossImpl : public Cloneable<MSELossImpl> {
 public:
  explicit MSELossImpl(const MSELossOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& input, const Tensor& target);

  MSELossOptions options;
};
TANDEM_MODULE(MSELoss);

class NLLLossImpl : public Cloneable<NLLLossImpl> {
 public:
  explicit NLLLossImpl(const NLLLossOptions& options = {});
  /// Registers options.weight() as the buffer "weight".
  void reset() override;
  /// input: [N, C] log-probabilities; target: [N] int64 class indices.
  Tensor forward(const Tensor& input, const Tensor& target);

  NLLLossOptions options;
  Tensor weight;
};
TANDEM_MODULE(NLLLoss);

class CrossEntropyLossImpl : public Cloneable<CrossEntropyLossImpl> {
 public:
  explicit CrossEntropyLossImpl(const CrossEntropyLossOptions& options = {});
  /// Registers options.weight() as the buffer "weight".
  void reset() override;
  /// input: [N, C] unnormalised scores; target: [N] int64 class indices.
  Tensor forward(const Tensor& input, const Tensor& target);

  CrossEntropyLossOptions options;
  Tensor weight;
};
TANDEM_MODULE(CrossEntropyLoss);

}  // namespace tandem::nn
