// TransformerEncoder and TransformerDecoder, as LibTorch's torch::nn
// modules: num_layers clones of one layer, registered as layers.0,
// layers.1, ... (a ModuleList), run in turn, then the optional norm.
//
//   namespace nn = tandem::nn;
//   nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(32, 4));
//   nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(layer, 2));
//   Tensor memory = encoder->forward(src, /*src_mask=*/{}, /*src_key_padding_mask=*/pad);
//   nn::TransformerDecoder decoder(
//       nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(32, 4), 2));
//   Tensor out = decoder->forward(tgt, memory, /*tgt_mask=*/causal);
#pragma once

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/any_module.h"
#include "tandem/nn/modules/container/module_list.h"
#include "tandem/nn/options/transformer_coder.h"

namespace tandem::nn {

class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(
            TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);

  /// Clones the layer num_layers times and the norm, if any.
  void reset() override;
  /// Fresh initial values for every layer and the norm.
  void reset_parameters();
  /// src and the masks as TransformerEncoderLayer's, given to every layer.
  Tensor forward(const Tensor& src,
                 const Tensor& src_mask = {},
                 const Tensor& src_key_padding_mask = {});

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  /// Empty unless options.norm() is given.
  AnyModule norm;
};
TANDEM_MODULE(TransformerEncoder);

class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(
            TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);

  void reset() override;
  void reset_parameters();
  /// tgt, memory and the masks as TransformerDecoderLayer's.
  Tensor forward(const Tensor& tgt,
                 const Tensor& memory,
                 const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {},
                 const Tensor& memory_key_padding_mask = {});

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  AnyModule norm;
};
TANDEM_MODULE(TransformerDecoder);

}  // namespace tandem::nn
