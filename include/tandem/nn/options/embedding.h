// Options for Embedding and functional::embedding, with LibTorch's setters.
//
//   tandem::nn::Embedding emb(tandem::nn::EmbeddingOptions(1000, 64).padding_idx(0));
//   auto e = F::embedding(ids, weight, F::EmbeddingFuncOptions().padding_idx(0));
#pragma once

#include <cstdint>
#include <optional>

namespace tandem::nn {

class EmbeddingOptions {
 public:
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}

  EmbeddingOptions& num_embeddings(int64_t value) {
    num_embeddings_ = value;
    return *this;
  }
  EmbeddingOptions& embedding_dim(int64_t value) {
    embedding_dim_ = value;
    return *this;
  }
  /// The row that stays zero and gets no gradient; negative counts from
  /// the end, as in PyTorch.
  EmbeddingOptions& padding_idx(std::optional<int64_t> value) {
    padding_idx_ = value;
    return *this;
  }

  int64_t num_embeddings() const noexcept { return num_embeddings_; }
  int64_t embedding_dim() const noexcept { return embedding_dim_; }
  const std::optional<int64_t>& padding_idx() const noexcept { return padding_idx_; }

 private:
  int64_t num_embeddings_;
  int64_t embedding_dim_;
  std::optional<int64_t> padding_idx_;
};

namespace functional {

class EmbeddingFuncOptions {
 public:
  EmbeddingFuncOptions& padding_idx(std::optional<int64_t> value) {
    padding_idx_ = value;
    return *this;
  }
  const std::optional<int64_t>& padding_idx() const noexcept { return padding_idx_; }

 private:
  std::optional<int64_t> padding_idx_;
};

}  // namespace functional
}  // namespace tandem::nn
