// Embedding: the table, its initialisation and lookup.
#include "tandem/nn/modules/embedding.h"

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"

namespace tandem::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& options) : options(options) {
  reset();
}

void EmbeddingImpl::reset() {
  const int64_t num = options.num_embeddings();
  TANDEM_CHECK(num >= 0 && options.embedding_dim() >= 0,
               "Embedding: num_embeddings and embedding_dim must be non-negative, got ",
               num,
               " and ",
               options.embedding_dim());
  if (const auto& padding_idx = options.padding_idx()) {
    TANDEM_CHECK(*padding_idx >= -num && *padding_idx < num,
                 "Embedding: padding_idx must be within num_embeddings (",
                 num,
                 "), got ",
                 *padding_idx);
    if (*padding_idx < 0) options.padding_idx(num + *padding_idx);
  }
  weight = register_parameter("weight", empty({num, options.embedding_dim()}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (const auto& padding_idx = options.padding_idx()) {
    NoGradGuard no_grad;
    weight.narrow(/*dim=*/0, *padding_idx, /*length=*/1).zero_();
  }
}

void EmbeddingImpl::pretty_print(std::ostream& stream) const {
  stream << "Embedding(num_embeddings=" << options.num_embeddings()
         << ", embedding_dim=" << options.embedding_dim();
  if (const auto& padding_idx = options.padding_idx()) {
    stream << ", padding_idx=" << *padding_idx;
  }
  stream << ")";
}

Tensor EmbeddingImpl::forward(const Tensor& indices) {
  return embedding(weight, indices, options.padding_idx().value_or(-1));
}

}  // namespace tandem::nn
