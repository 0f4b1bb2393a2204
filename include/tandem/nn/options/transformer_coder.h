// Options for TransformerEncoder and TransformerDecoder, as LibTorch's: the
// layer that is cloned num_layers times (given as a module, or as options
// to build one from) and an optional final norm.
//
//   namespace nn = tandem::nn;
//   nn::TransformerEncoder encoder(
//       nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(32, 4), 6)
//           .norm(nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({32})))));
#pragma once

#include <cstdint>
#include <utility>

#include "tandem/nn/modules/any_module.h"
#include "tandem/nn/modules/transformer_layer.h"
#include "tandem/nn/options/transformer_layer.h"

namespace tandem::nn {

class TransformerEncoderOptions {
 public:
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& encoder_layer_options,
                            int64_t num_layers)
      : encoder_layer_(encoder_layer_options), num_layers_(num_layers) {}

  /// The layer cloned num_layers times (the clones start equal to it).
  TransformerEncoderOptions& encoder_layer(TransformerEncoderLayer value) {
    encoder_layer_ = std::move(value);
    return *this;
  }
  TransformerEncoderOptions& num_layers(int64_t value) {
    num_layers_ = value;
    return *this;
  }
  /// Applied to the last layer's output when given (default: none).
  TransformerEncoderOptions& norm(AnyModule value) {
    norm_ = std::move(value);
    return *this;
  }

  const TransformerEncoderLayer& encoder_layer() const noexcept { return encoder_layer_; }
  int64_t num_layers() const noexcept { return num_layers_; }
  const AnyModule& norm() const noexcept { return norm_; }

 private:
  TransformerEncoderLayer encoder_layer_;
  int64_t num_layers_;
  AnyModule norm_;
};

class TransformerDecoderOptions {
 public:
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& decoder_layer_options,
                            int64_t num_layers)
      : decoder_layer_(decoder_layer_options), num_layers_(num_layers) {}

  TransformerDecoderOptions& decoder_layer(TransformerDecoderLayer value) {
    decoder_layer_ = std::move(value);
    return *this;
  }
  TransformerDecoderOptions& num_layers(int64_t value) {
    num_layers_ = value;
    return *this;
  }
  TransformerDecoderOptions& norm(AnyModule value) {
    norm_ = std::move(value);
    return *this;
  }

  const TransformerDecoderLayer& decoder_layer() const noexcept { return decoder_layer_; }
  int64_t num_layers() const noexcept { return num_layers_; }
  const AnyModule& norm() const noexcept { return norm_; }

 private:
  TransformerDecoderLayer decoder_layer_;
  int64_t num_layers_;
  AnyModule norm_;
};

}  // namespace tandem::nn
