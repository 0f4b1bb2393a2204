// Loss modules: MSELoss, CrossEntropyLoss, NLLLoss, BCELoss,
// BCEWithLogitsLoss, L1Loss, SmoothL1Loss, HuberLoss, KLDivLoss,
// CosineEmbeddingLoss, MarginRankingLoss, as LibTorch's modules of the same
// names. forward(input, target) (forward(input1, input2, target) for the
// last two) calls the loss op; weight tensors are kept as buffers ("weight",
// "pos_weight"), so to() moves them with the model.
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

class BCELossImpl : public Cloneable<BCELossImpl> {
 public:
  explicit BCELossImpl(const BCELossOptions& options = {});
  /// Registers options.weight() as the buffer "weight".
  void reset() override;
  /// input: probabilities in [0, 1]; target: input's shape.
  Tensor forward(const Tensor& input, const Tensor& target);

  BCELossOptions options;
  Tensor weight;
};
TANDEM_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public Cloneable<BCEWithLogitsLossImpl> {
 public:
  explicit BCEWithLogitsLossImpl(const BCEWithLogitsLossOptions& options = {});
  /// Registers the buffers "weight" and "pos_weight".
  void reset() override;
  /// input: scores (logits); target: input's shape.
  Tensor forward(const Tensor& input, const Tensor& target);

  BCEWithLogitsLossOptions options;
  Tensor weight;
  Tensor pos_weight;
};
TANDEM_MODULE(BCEWithLogitsLoss);

class L1LossImpl : public Cloneable<L1LossImpl> {
 public:
  explicit L1LossImpl(const L1LossOptions& options = {}) : options(options) {}
  void reset() override {}
  Tensor forward(const Tensor& input, const Tensor& target);

  L1LossOptions options;
};
TANDEM_MODULE(L1Loss);

class SmoothL1LossImpl : public Cloneable<SmoothL1LossImpl> {
 public:
  explicit SmoothL1LossImpl(const SmoothL1LossOptions& options = {});
  /// Checks beta.
  void reset() override;
  Tensor forward(const Tensor& input, const Tensor& target);

  SmoothL1LossOptions options;
};
TANDEM_MODULE(SmoothL1Loss);

class HuberLossImpl : public Cloneable<HuberLossImpl> {
 public:
  explicit HuberLossImpl(const HuberLossOptions& options = {});
  /// Checks delta.
  void reset() override;
  Tensor forward(const Tensor& input, const Tensor& target);

  HuberLossOptions options;
};
TANDEM_MODULE(HuberLoss);

class KLDivLossImpl : public Cloneable<KLDivLossImpl> {
 public:
  explicit KLDivLossImpl(const KLDivLossOptions& options = {}) : options(options) {}
  void reset() override {}
  /// input: log-probabilities; target: probabilities (or log-probabilities).
  Tensor forward(const Tensor& input, const Tensor& target);

  KLDivLossOptions options;
};
TANDEM_MODULE(KLDivLoss);

class CosineEmbeddingLossImpl : public Cloneable<CosineEmbeddingLossImpl> {
 public:
  explicit CosineEmbeddingLossImpl(const CosineEmbeddingLossOptions& options = {})
      : options(options) {}
  void reset() override {}
  /// input1, input2: [N, D]; target: [N] of 1 (similar) and -1 (dissimilar).
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);

  CosineEmbeddingLossOptions options;
};
TANDEM_MODULE(CosineEmbeddingLoss);

class MarginRankingLossImpl : public Cloneable<MarginRankingLossImpl> {
 public:
  explicit MarginRankingLossImpl(const MarginRankingLossOptions& options = {})
      : options(options) {}
  void reset() override {}
  /// target 1: input1 should rank higher; -1: input2 should.
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target);

  MarginRankingLossOptions options;
};
TANDEM_MODULE(MarginRankingLoss);

}  // namespace tandem::nn
