// Transformer: an encoder and a decoder stack with final layer norms, and
// the causal mask.
#include "tandem/nn/modules/transformer.h"

#include <limits>

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/init.h"
#include "tandem/nn/modules/layer_norm.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {

TransformerImpl::TransformerImpl(TransformerOptions options)
    : options(std::move(options)) {
  reset();
}

void TransformerImpl::reset() {
  const TransformerOptions& o = options;
  const LayerNormOptions norm = LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
  TransformerEncoderLayer encoder_layer(
      TransformerEncoderLayerOptions(o.d_model(), o.nhead())
          .dim_feedforward(o.dim_feedforward())
          .dropout(o.dropout())
          .activation(o.activation())
          .layer_norm_eps(o.layer_norm_eps())
          .batch_first(o.batch_first())
          .norm_first(o.norm_first()));
  encoder = register_module(
      "encoder",
      TransformerEncoder(TransformerEncoderOptions(encoder_layer, o.num_encoder_layers())
                             .norm(AnyModule(LayerNorm(norm)))));
  TransformerDecoderLayer decoder_layer(
      TransformerDecoderLayerOptions(o.d_model(), o.nhead())
          .dim_feedforward(o.dim_feedforward())
          .dropout(o.dropout())
          .activation(o.activation())
          .layer_norm_eps(o.layer_norm_eps())
          .batch_first(o.batch_first())
          .norm_first(o.norm_first()));
  decoder = register_module(
      "decoder",
      TransformerDecoder(TransformerDecoderOptions(decoder_layer, o.num_decoder_layers())
                             .norm(AnyModule(LayerNorm(norm)))));
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters()) {
    if (p.dim() > 1) init::xavier_uniform_(p);
  }
}

Tensor TransformerImpl::forward(const Tensor& src,
                                const Tensor& tgt,
                                const Tensor& src_mask,
                                const Tensor& tgt_mask,
                                const Tensor& memory_mask,
                                const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask,
                                const Tensor& memory_key_padding_mask) {
  TANDEM_CHECK(src.defined() && tgt.defined(),
               "Transformer: src and tgt must be defined");
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  TANDEM_CHECK(
      src.dim() != 3 || (tgt.dim() == 3 && src.size(batch_dim) == tgt.size(batch_dim)),
      "Transformer: the batch number of src and tgt must be equal, got shapes ",
      src.sizes(),
      " and ",
      tgt.sizes(),
      options.batch_first() ? " (batch_first)" : "");
  TANDEM_CHECK(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
               "Transformer: the feature number of src and tgt must be equal to d_model=",
               options.d_model(),
               ", got shapes ",
               src.sizes(),
               " and ",
               tgt.sizes());
  Tensor memory = encoder->forward(src, src_mask, src_key_padding_mask);
  return decoder->forward(
      tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask, memory_key_padding_mask);
}

Tensor TransformerImpl::generate_square_subsequent_mask(int64_t sz,
                                                        const TensorOptions& options) {
  TANDEM_CHECK(
      sz >= 0,
      "Transformer::generate_square_subsequent_mask: size must be non-negative, got ",
      sz);
  NoGradGuard no_grad;
  const TensorOptions index = TensorOptions(kInt64).device(options.device());
  const Tensor rows = arange(sz, index).unsqueeze(1);
  const Tensor cols = arange(sz, index).unsqueeze(0);
  const TensorOptions values = TensorOptions(options.dtype()).device(options.device());
  return where(gt(cols, rows),
               full({}, -std::numeric_limits<double>::infinity(), values),
               zeros({}, values));
}

}  // namespace tandem::nn
