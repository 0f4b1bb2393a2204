// TransformerEncoder and TransformerDecoder: clones of one layer, run in
// turn, and the optional final norm.
#include "tandem/nn/modules/transformer_coder.h"

#include <string>

#include "tandem/core/error.h"
#include "tandem/nn/modules/layer_norm.h"

namespace tandem::nn {
namespace {

void check_stack(const char* module, bool layer_empty, int64_t num_layers) {
  TANDEM_CHECK(!layer_empty, module, ": the layer to clone is empty");
  TANDEM_CHECK(
      num_layers >= 1, module, ": num_layers must be positive, got ", num_layers);
}

// Resets the norm's parameters when it is a LayerNorm (the only norm whose
// reset tandem knows; PyTorch's Transformer re-initialises the rest itself).
void reset_norm(const AnyModule& norm) {
  if (norm.is_empty()) return;
  if (auto* layer_norm = norm.ptr()->as<LayerNorm>()) layer_norm->reset_parameters();
}

}  // namespace

// ---- TransformerEncoder ----

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options)
    : options(std::move(options)) {
  reset();
}

void TransformerEncoderImpl::reset() {
  check_stack(
      "TransformerEncoder", options.encoder_layer().is_empty(), options.num_layers());
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) {
    layers->push_back(options.encoder_layer()->clone());
  }
  norm = AnyModule();
  if (!options.norm().is_empty()) {
    norm = options.norm().clone();
    register_module("norm", norm.ptr());
  }
}

void TransformerEncoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) {
    layers->ptr<TransformerEncoderLayerImpl>(i)->reset_parameters();
  }
  reset_norm(norm);
}

Tensor TransformerEncoderImpl::forward(const Tensor& src,
                                       const Tensor& src_mask,
                                       const Tensor& src_key_padding_mask) {
  Tensor output = src;
  for (const auto& layer : *layers) {
    auto* encoder_layer = layer->as<TransformerEncoderLayer>();
    TANDEM_INTERNAL_ASSERT(
        encoder_layer != nullptr, "TransformerEncoder: layers holds a ", layer->name());
    output = encoder_layer->forward(output, src_mask, src_key_padding_mask);
  }
  if (!norm.is_empty()) output = norm.forward(output);
  return output;
}

// ---- TransformerDecoder ----

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options)
    : options(std::move(options)) {
  reset();
}

void TransformerDecoderImpl::reset() {
  check_stack(
      "TransformerDecoder", options.decoder_layer().is_empty(), options.num_layers());
  layers = register_module("layers", ModuleList());
  for (int64_t i = 0; i < options.num_layers(); ++i) {
    layers->push_back(options.decoder_layer()->clone());
  }
  norm = AnyModule();
  if (!options.norm().is_empty()) {
    norm = options.norm().clone();
    register_module("norm", norm.ptr());
  }
}

void TransformerDecoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) {
    layers->ptr<TransformerDecoderLayerImpl>(i)->reset_parameters();
  }
  reset_norm(norm);
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt,
                                       const Tensor& memory,
                                       const Tensor& tgt_mask,
                                       const Tensor& memory_mask,
                                       const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor output = tgt;
  for (const auto& layer : *layers) {
    auto* decoder_layer = layer->as<TransformerDecoderLayer>();
    TANDEM_INTERNAL_ASSERT(
        decoder_layer != nullptr, "TransformerDecoder: layers holds a ", layer->name());
    output = decoder_layer->forward(output,
                                    memory,
                                    tgt_mask,
                                    memory_mask,
                                    tgt_key_padding_mask,
                                    memory_key_padding_mask);
  }
  if (!norm.is_empty()) output = norm.forward(output);
  return output;
}

}  // namespace tandem::nn
