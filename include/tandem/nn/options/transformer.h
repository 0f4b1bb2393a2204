// Options for Transformer, as LibTorch's (d_model 512, nhead 8, 6 encoder
// and 6 decoder layers, dim_feedforward 2048, dropout 0.1, kReLU) with
// PyTorch 1.13's layer_norm_eps, batch_first and norm_first.
//
//   tandem::nn::Transformer model(tandem::nn::TransformerOptions(64, 4, 2, 2)
//                                     .dim_feedforward(128).batch_first(true));
#pragma once

#include <cstdint>
#include <utility>

#include "tandem/nn/options/transformer_layer.h"

namespace tandem::nn {

class TransformerOptions {
 public:
  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model,
                     int64_t nhead,
                     int64_t num_encoder_layers,
                     int64_t num_decoder_layers)
      : d_model_(d_model),
        nhead_(nhead),
        num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}

  TransformerOptions& d_model(int64_t value) { return set(d_model_, value); }
  TransformerOptions& nhead(int64_t value) { return set(nhead_, value); }
  TransformerOptions& num_encoder_layers(int64_t value) {
    return set(num_encoder_layers_, value);
  }
  TransformerOptions& num_decoder_layers(int64_t value) {
    return set(num_decoder_layers_, value);
  }
  TransformerOptions& dim_feedforward(int64_t value) {
    return set(dim_feedforward_, value);
  }
  TransformerOptions& dropout(double value) { return set(dropout_, value); }
  TransformerOptions& activation(TransformerActivation value) {
    return set(activation_, std::move(value));
  }
  TransformerOptions& layer_norm_eps(double value) { return set(layer_norm_eps_, value); }
  TransformerOptions& batch_first(bool value) { return set(batch_first_, value); }
  TransformerOptions& norm_first(bool value) { return set(norm_first_, value); }

  int64_t d_model() const noexcept { return d_model_; }
  int64_t nhead() const noexcept { return nhead_; }
  int64_t num_encoder_layers() const noexcept { return num_encoder_layers_; }
  int64_t num_decoder_layers() const noexcept { return num_decoder_layers_; }
  int64_t dim_feedforward() const noexcept { return dim_feedforward_; }
  double dropout() const noexcept { return dropout_; }
  const TransformerActivation& activation() const noexcept { return activation_; }
  double layer_norm_eps() const noexcept { return layer_norm_eps_; }
  bool batch_first() const noexcept { return batch_first_; }
  bool norm_first() const noexcept { return norm_first_; }

 private:
  template <typename T>
  TransformerOptions& set(T& field, T value) {
    field = std::move(value);
    return *this;
  }

  int64_t d_model_ = 512;
  int64_t nhead_ = 8;
  int64_t num_encoder_layers_ = 6;
  int64_t num_decoder_layers_ = 6;
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  TransformerActivation activation_;
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false;
  bool norm_first_ = false;
};

}  // namespace tandem::nn
