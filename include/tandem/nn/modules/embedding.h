// Embedding: a lookup table of num_embeddings vectors, as LibTorch's
// torch::nn::Embedding. The weight starts N(0, 1), with the padding row (if
// any) zeroed; that row gets no gradient.
//
//   tandem::nn::Embedding emb(tandem::nn::EmbeddingOptions(1000, 64).padding_idx(0));
//   auto ids = tandem::tensor<int64_t>({3, 0, 7});
//   auto vectors = emb->forward(ids);     // [3, 64]
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/embedding.h"

namespace tandem::nn {

class EmbeddingImpl : public Cloneable<EmbeddingImpl> {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);

  /// Creates weight [num_embeddings, embedding_dim] and initialises it; a
  /// negative padding_idx is made positive here, as in PyTorch.
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// indices: int64 of any shape -> [..., embedding_dim].
  Tensor forward(const Tensor& indices);

  EmbeddingOptions options;
  Tensor weight;
};
TANDEM_MODULE(Embedding);

}  // namespace tandem::nn
