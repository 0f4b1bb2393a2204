// Options for the recurrent layers and cells, with LibTorch's chainable
// setters and defaults.
//
//   tandem::nn::LSTM lstm(tandem::nn::LSTMOptions(32, 64).num_layers(2).dropout(0.5)
//                             .batch_first(true).bidirectional(true));
//   tandem::nn::RNN rnn(tandem::nn::RNNOptions(8, 16).nonlinearity(tandem::kReLU));
//   tandem::nn::GRUCell cell(tandem::nn::GRUCellOptions(8, 16).bias(false));
#pragma once

#include <cstdint>

#include "tandem/nn/init.h"  // Nonlinearity, kTanh, kReLU

namespace tandem::nn {
namespace detail {

/// What RNN, LSTM and GRU options share; setters return the derived type.
template <typename Derived>
class RNNOptionsBase {
 public:
  RNNOptionsBase(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}

  Derived& input_size(int64_t value) { return set(input_size_, value); }
  Derived& hidden_size(int64_t value) { return set(hidden_size_, value); }
  /// Stacked layers (default 1).
  Derived& num_layers(int64_t value) { return set(num_layers_, value); }
  /// Whether the layers learn b_ih and b_hh (default true).
  Derived& bias(bool value) { return set(bias_, value); }
  /// Input and output as [batch, seq, feature] (default false: [seq, batch,
  /// feature]); the states stay [layers * directions, batch, hidden].
  Derived& batch_first(bool value) { return set(batch_first_, value); }
  /// Dropout probability on the outputs of every layer but the last, in
  /// training mode (default 0).
  Derived& dropout(double value) { return set(dropout_, value); }
  Derived& bidirectional(bool value) { return set(bidirectional_, value); }

  int64_t input_size() const noexcept { return input_size_; }
  int64_t hidden_size() const noexcept { return hidden_size_; }
  int64_t num_layers() const noexcept { return num_layers_; }
  bool bias() const noexcept { return bias_; }
  bool batch_first() const noexcept { return batch_first_; }
  double dropout() const noexcept { return dropout_; }
  bool bidirectional() const noexcept { return bidirectional_; }

 private:
  template <typename T>
  Derived& set(T& field, T value) {
    field = value;
    return static_cast<Derived&>(*this);
  }

  int64_t input_size_;
  int64_t hidden_size_;
  int64_t num_layers_ = 1;
  bool bias_ = true;
  bool batch_first_ = false;
  double dropout_ = 0.0;
  bool bidirectional_ = false;
};

/// What the cells' options share.
template <typename Derived>
class RNNCellOptionsBase {
 public:
  RNNCellOptionsBase(int64_t input_size, int64_t hidden_size)
      : input_size_(input_size), hidden_size_(hidden_size) {}

  Derived& input_size(int64_t value) {
    input_size_ = value;
    return static_cast<Derived&>(*this);
  }
  Derived& hidden_size(int64_t value) {
    hidden_size_ = value;
    return static_cast<Derived&>(*this);
  }
  /// Whether the cell learns b_ih and b_hh (default true).
  Derived& bias(bool value) {
    bias_ = value;
    return static_cast<Derived&>(*this);
  }

  int64_t input_size() const noexcept { return input_size_; }
  int64_t hidden_size() const noexcept { return hidden_size_; }
  bool bias() const noexcept { return bias_; }

 private:
  int64_t input_size_;
  int64_t hidden_size_;
  bool bias_ = true;
};

}  // namespace detail

class LSTMOptions : public detail::RNNOptionsBase<LSTMOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
};

class GRUOptions : public detail::RNNOptionsBase<GRUOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
};

class RNNOptions : public detail::RNNOptionsBase<RNNOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
  /// tandem::kTanh (default) or tandem::kReLU.
  RNNOptions& nonlinearity(Nonlinearity value) {
    nonlinearity_ = value;
    return *this;
  }
  Nonlinearity nonlinearity() const noexcept { return nonlinearity_; }

 private:
  Nonlinearity nonlinearity_ = kTanh;
};

class LSTMCellOptions : public detail::RNNCellOptionsBase<LSTMCellOptions> {
 public:
  using RNNCellOptionsBase::RNNCellOptionsBase;
};

class GRUCellOptions : public detail::RNNCellOptionsBase<GRUCellOptions> {
 public:
  using RNNCellOptionsBase::RNNCellOptionsBase;
};

class RNNCellOptions : public detail::RNNCellOptionsBase<RNNCellOptions> {
 public:
  using RNNCellOptionsBase::RNNCellOptionsBase;
  /// tandem::kTanh (default) or tandem::kReLU.
  RNNCellOptions& nonlinearity(Nonlinearity value) {
    nonlinearity_ = value;
    return *this;
  }
  Nonlinearity nonlinearity() const noexcept { return nonlinearity_; }

 private:
  Nonlinearity nonlinearity_ = kTanh;
};

}  // namespace tandem::nn
