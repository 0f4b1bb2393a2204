// Transformer, as LibTorch's torch::nn::Transformer with PyTorch 1.13's
// layer_norm_eps, batch_first and norm_first: an encoder (num_encoder_layers
// encoder layers and a final LayerNorm) and a decoder (num_decoder_layers
// decoder layers and a final LayerNorm), every parameter of two or more
// dims re-initialised with xavier_uniform_ as PyTorch does.
// (LibTorch's custom_encoder and custom_decoder are not offered: tandem's
// AnyModule holds one-tensor forwards only.)
//
//   tandem::nn::Transformer model(tandem::nn::TransformerOptions(32, 4, 2, 2));
//   Tensor causal = tandem::nn::TransformerImpl::generate_square_subsequent_mask(T);
//   Tensor out = model->forward(src, tgt, /*src_mask=*/{}, /*tgt_mask=*/causal);
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/core/tensor_options.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/transformer_coder.h"
#include "tandem/nn/options/transformer.h"

namespace tandem::nn {

class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  explicit TransformerImpl(TransformerOptions options = {});

  void reset() override;
  /// xavier_uniform_ on every parameter of two or more dims.
  void reset_parameters();
  /// src [S, N, d_model] and tgt [T, N, d_model] ([N, S, d_model] and [N, T,
  /// d_model] with batch_first; [S, d_model], [T, d_model] unbatched); masks
  /// as MultiheadAttention's. Returns the decoder's output, shaped like tgt.
  Tensor forward(const Tensor& src,
                 const Tensor& tgt,
                 const Tensor& src_mask = {},
                 const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {},
                 const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});

  /// [sz, sz]: 0 on and below the diagonal, -inf above it (a position may
  /// attend to itself and earlier ones). float32 on the CPU unless told.
  static Tensor generate_square_subsequent_mask(int64_t sz,
                                                const TensorOptions& options = {});

  TransformerOptions options;
  TransformerEncoder encoder{nullptr};
  TransformerDecoder decoder{nullptr};
};
TANDEM_MODULE(Transformer);

}  // namespace tandem::nn
