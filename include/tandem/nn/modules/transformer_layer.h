// TransformerEncoderLayer and TransformerDecoderLayer, as LibTorch's
// torch::nn modules with PyTorch 1.13's layer_norm_eps, batch_first and
// norm_first: self-attention (and, in the decoder, attention over the
// encoder's memory) and a feed-forward block, each with dropout, a residual
// connection and a layer norm after it (or before it, norm_first).
// Submodules under PyTorch's names: self_attn, multihead_attn, linear1,
// dropout, linear2, norm1..3, dropout1..3.
//
//   tandem::nn::TransformerEncoderLayer enc(
//       tandem::nn::TransformerEncoderLayerOptions(32, 4).dim_feedforward(64));
//   Tensor y = enc->forward(x);                        // x: [L, N, 32]
//   tandem::nn::TransformerDecoderLayer dec(32, 4);
//   Tensor z = dec->forward(tgt, memory, /*tgt_mask=*/causal);
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/attention.h"
#include "tandem/nn/modules/dropout.h"
#include "tandem/nn/modules/layer_norm.h"
#include "tandem/nn/modules/linear.h"
#include "tandem/nn/options/transformer_layer.h"

namespace tandem::nn {

class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);

  void reset() override;
  /// Fresh initial values for every submodule.
  void reset_parameters();
  /// src [L, N, d_model] ([N, L, d_model] with batch_first, [L, d_model]
  /// unbatched); src_mask and src_key_padding_mask as MultiheadAttention's
  /// attn_mask and key_padding_mask. Returns a tensor shaped like src.
  Tensor forward(const Tensor& src,
                 const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
};
TANDEM_MODULE(TransformerEncoderLayer);

class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);

  void reset() override;
  void reset_parameters();
  /// tgt [T, N, d_model], memory [S, N, d_model] (batch first or unbatched
  /// as the encoder layer's src); the masks as MultiheadAttention's: tgt_*
  /// for the self-attention, memory_* for the attention over memory.
  Tensor forward(const Tensor& tgt,
                 const Tensor& memory,
                 const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  MultiheadAttention multihead_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr};
  LayerNorm norm2{nullptr};
  LayerNorm norm3{nullptr};
  Dropout dropout1{nullptr};
  Dropout dropout2{nullptr};
  Dropout dropout3{nullptr};
};
TANDEM_MODULE(TransformerDecoderLayer);

}  // namespace tandem::nn
