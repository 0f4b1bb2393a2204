// The recurrent layers RNN, LSTM and GRU and their cells, as LibTorch's
// torch::nn modules: the same options, parameter names (weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse; the cells' weight_ih,
// weight_hh, bias_ih, bias_hh), PyTorch's initialisation (every parameter
// from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))) and return types.
// Initial states default to zeros; dropout acts between layers in training
// mode only. The arithmetic is tandem/ops/rnn.h's.
//
//   tandem::nn::LSTM lstm(tandem::nn::LSTMOptions(10, 20).num_layers(2));
//   auto [out, state] = lstm->forward(x);              // x: [T, B, 10]
//   auto [h_n, c_n] = state;                           // [2, B, 20] each
//   auto [out2, state2] = lstm->forward(x, state);     // carry the state on
//   tandem::nn::GRUCell cell(10, 20);
//   Tensor h = cell->forward(x_t, h);                  // [B, 20]
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <tuple>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/rnn.h"

namespace tandem::nn {
namespace detail {

/// What RNN, LSTM and GRU share: the parameters of every layer and
/// direction, their initialisation and printing.
template <typename Derived, typename Options>
class RNNImplBase : public Cloneable<Derived> {
 public:
  RNNImplBase(const Options& options, int64_t gates);

  /// Creates every layer's parameters and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's reset_parameters).
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  /// The parameters in the order the ops take them: per layer and
  /// direction, w_ih, w_hh (and b_ih, b_hh with bias).
  const std::vector<Tensor>& flat_weights() const { return flat_weights_; }
  /// The same, grouped per layer and direction.
  std::vector<std::vector<Tensor>> all_weights() const;

  Options options;

 protected:
  std::vector<Tensor> flat_weights_;

 private:
  int64_t gates_;
};

/// What the cells share: weight_ih, weight_hh, bias_ih, bias_hh.
template <typename Derived, typename Options>
class RNNCellImplBase : public Cloneable<Derived> {
 public:
  RNNCellImplBase(const Options& options, int64_t gates);

  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;

  Options options;
  Tensor weight_ih;
  Tensor weight_hh;
  /// Undefined when options.bias() is false.
  Tensor bias_ih;
  Tensor bias_hh;

 private:
  int64_t gates_;
};

}  // namespace detail

class RNNImpl : public detail::RNNImplBase<RNNImpl, RNNOptions> {
 public:
  RNNImpl(int64_t input_size, int64_t hidden_size)
      : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  explicit RNNImpl(const RNNOptions& options);
  /// input [T, B, I] ([B, T, I] with batch_first, or [T, I]); hx [layers *
  /// directions, B, H] or undefined (zeros). Returns (output, h_n).
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
};
TANDEM_MODULE(RNN);

class LSTMImpl : public detail::RNNImplBase<LSTMImpl, LSTMOptions> {
 public:
  LSTMImpl(int64_t input_size, int64_t hidden_size)
      : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  explicit LSTMImpl(const LSTMOptions& options);
  /// Returns (output, (h_n, c_n)); hx_opt = (h0, c0) or none (zeros).
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
};
TANDEM_MODULE(LSTM);

class GRUImpl : public detail::RNNImplBase<GRUImpl, GRUOptions> {
 public:
  GRUImpl(int64_t input_size, int64_t hidden_size)
      : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  explicit GRUImpl(const GRUOptions& options);
  std::tuple<Tensor, Tensor> forward(const Tensor& input, Tensor hx = {});
};
TANDEM_MODULE(GRU);

class RNNCellImpl : public detail::RNNCellImplBase<RNNCellImpl, RNNCellOptions> {
 public:
  RNNCellImpl(int64_t input_size, int64_t hidden_size)
      : RNNCellImpl(RNNCellOptions(input_size, hidden_size)) {}
  explicit RNNCellImpl(const RNNCellOptions& options);
  /// input [B, I] or [I]; hx [B, H] ([H]) or undefined (zeros).
  Tensor forward(const Tensor& input, Tensor hx = {});
};
TANDEM_MODULE(RNNCell);

class LSTMCellImpl : public detail::RNNCellImplBase<LSTMCellImpl, LSTMCellOptions> {
 public:
  LSTMCellImpl(int64_t input_size, int64_t hidden_size)
      : LSTMCellImpl(LSTMCellOptions(input_size, hidden_size)) {}
  explicit LSTMCellImpl(const LSTMCellOptions& options);
  /// Returns (h', c'); hx_opt = (h, c) or none (zeros).
  std::tuple<Tensor, Tensor> forward(
      const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt = {});
};
TANDEM_MODULE(LSTMCell);

class GRUCellImpl : public detail::RNNCellImplBase<GRUCellImpl, GRUCellOptions> {
 public:
  GRUCellImpl(int64_t input_size, int64_t hidden_size)
      : GRUCellImpl(GRUCellOptions(input_size, hidden_size)) {}
  explicit GRUCellImpl(const GRUCellOptions& options);
  Tensor forward(const Tensor& input, Tensor hx = {});
};
TANDEM_MODULE(GRUCell);

}  // namespace tandem::nn
