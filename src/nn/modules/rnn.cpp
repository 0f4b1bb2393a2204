// RNN, LSTM, GRU and their cells: parameters under LibTorch's names,
// PyTorch's initialisation, printing and forward over tandem/ops/rnn.h.
#include "tandem/nn/modules/rnn.h"

#include <cmath>
#include <string>

#include "tandem/core/error.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/rnn.h"

namespace tandem::nn {
namespace {

// PyTorch's reset_parameters of every recurrent module: each parameter
// from U(-1/sqrt(hidden), 1/sqrt(hidden)).
void init_uniform(const std::vector<Tensor>& params, int64_t hidden_size) {
  const double bound =
      hidden_size > 0 ? 1.0 / std::sqrt(static_cast<double>(hidden_size)) : 0;
  for (const Tensor& p : params) {
    Tensor t = p;
    init::uniform_(t, -bound, bound);
  }
}

void check_sizes(const std::string& module, int64_t input_size, int64_t hidden_size) {
  TANDEM_CHECK(input_size > 0 && hidden_size > 0,
               module,
               ": input_size and hidden_size must be positive, got ",
               input_size,
               " and ",
               hidden_size);
}

const char* text(bool value) { return value ? "true" : "false"; }

}  // namespace

namespace detail {

template <typename Derived, typename Options>
RNNImplBase<Derived, Options>::RNNImplBase(const Options& options, int64_t gates)
    : options(options), gates_(gates) {}

template <typename Derived, typename Options>
void RNNImplBase<Derived, Options>::reset() {
  const Options& o = options;
  check_sizes(this->name(), o.input_size(), o.hidden_size());
  TANDEM_CHECK(o.num_layers() >= 1,
               this->name(),
               ": num_layers must be positive, got ",
               o.num_layers());
  TANDEM_CHECK(o.dropout() >= 0 && o.dropout() <= 1,
               this->name(),
               ": dropout must be a probability in [0, 1], got ",
               o.dropout());
  const int64_t h = o.hidden_size(), width = gates_ * h;
  const int64_t dirs = o.bidirectional() ? 2 : 1;
  flat_weights_.clear();
  for (int64_t layer = 0; layer < o.num_layers(); ++layer) {
    for (int64_t d = 0; d < dirs; ++d) {
      const std::string suffix =
          tandem::detail::str("_l", layer, d == 1 ? "_reverse" : "");
      const int64_t in = layer == 0 ? o.input_size() : dirs * h;
      flat_weights_.push_back(
          this->register_parameter("weight_ih" + suffix, empty({width, in})));
      flat_weights_.push_back(
          this->register_parameter("weight_hh" + suffix, empty({width, h})));
      if (!o.bias()) continue;
      flat_weights_.push_back(
          this->register_parameter("bias_ih" + suffix, empty({width})));
      flat_weights_.push_back(
          this->register_parameter("bias_hh" + suffix, empty({width})));
    }
  }
  reset_parameters();
}

template <typename Derived, typename Options>
void RNNImplBase<Derived, Options>::reset_parameters() {
  init_uniform(flat_weights_, options.hidden_size());
}

template <typename Derived, typename Options>
std::vector<std::vector<Tensor>> RNNImplBase<Derived, Options>::all_weights() const {
  const size_t per = options.bias() ? 4 : 2;
  std::vector<std::vector<Tensor>> out;
  for (size_t i = 0; i < flat_weights_.size(); i += per) {
    out.emplace_back(flat_weights_.begin() + static_cast<std::ptrdiff_t>(i),
                     flat_weights_.begin() + static_cast<std::ptrdiff_t>(i + per));
  }
  return out;
}

template <typename Derived, typename Options>
void RNNImplBase<Derived, Options>::pretty_print(std::ostream& stream) const {
  const Options& o = options;
  stream << this->name() << "(input_size=" << o.input_size()
         << ", hidden_size=" << o.hidden_size() << ", num_layers=" << o.num_layers()
         << ", bias=" << text(o.bias()) << ", batch_first=" << text(o.batch_first())
         << ", dropout=" << o.dropout() << ", bidirectional=" << text(o.bidirectional())
         << ")";
}

template <typename Derived, typename Options>
RNNCellImplBase<Derived, Options>::RNNCellImplBase(const Options& options, int64_t gates)
    : options(options), gates_(gates) {}

template <typename Derived, typename Options>
void RNNCellImplBase<Derived, Options>::reset() {
  check_sizes(this->name(), options.input_size(), options.hidden_size());
  const int64_t h = options.hidden_size(), width = gates_ * h;
  weight_ih = this->register_parameter("weight_ih", empty({width, options.input_size()}));
  weight_hh = this->register_parameter("weight_hh", empty({width, h}));
  const bool bias = options.bias();
  bias_ih = this->register_parameter("bias_ih", bias ? empty({width}) : Tensor(), bias);
  bias_hh = this->register_parameter("bias_hh", bias ? empty({width}) : Tensor(), bias);
  reset_parameters();
}

template <typename Derived, typename Options>
void RNNCellImplBase<Derived, Options>::reset_parameters() {
  std::vector<Tensor> params{weight_ih, weight_hh};
  if (bias_ih.defined()) params.insert(params.end(), {bias_ih, bias_hh});
  init_uniform(params, options.hidden_size());
}

template <typename Derived, typename Options>
void RNNCellImplBase<Derived, Options>::pretty_print(std::ostream& stream) const {
  stream << this->name() << "(" << options.input_size() << ", " << options.hidden_size();
  if (!options.bias()) stream << ", bias=false";
  if constexpr (requires { options.nonlinearity(); }) {
    if (options.nonlinearity() == kReLU) stream << ", nonlinearity=kReLU";
  }
  stream << ")";
}

template class RNNImplBase<RNNImpl, RNNOptions>;
template class RNNImplBase<LSTMImpl, LSTMOptions>;
template class RNNImplBase<GRUImpl, GRUOptions>;
template class RNNCellImplBase<RNNCellImpl, RNNCellOptions>;
template class RNNCellImplBase<LSTMCellImpl, LSTMCellOptions>;
template class RNNCellImplBase<GRUCellImpl, GRUCellOptions>;

}  // namespace detail

RNNImpl::RNNImpl(const RNNOptions& options) : RNNImplBase(options, 1) {
  TANDEM_CHECK(options.nonlinearity() == kTanh || options.nonlinearity() == kReLU,
               "RNN: nonlinearity must be kTanh or kReLU");
  reset();
}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  const auto& o = options;
  auto fn = o.nonlinearity() == kReLU ? rnn_relu : rnn_tanh;
  return fn(input,
            hx,
            flat_weights_,
            o.bias(),
            o.num_layers(),
            o.dropout(),
            is_training(),
            o.bidirectional(),
            o.batch_first());
}

LSTMImpl::LSTMImpl(const LSTMOptions& options) : RNNImplBase(options, 4) { reset(); }

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  const auto& o = options;
  std::vector<Tensor> hx;
  if (hx_opt) hx = {std::get<0>(*hx_opt), std::get<1>(*hx_opt)};
  auto [output, h_n, c_n] = lstm(input,
                                 hx,
                                 flat_weights_,
                                 o.bias(),
                                 o.num_layers(),
                                 o.dropout(),
                                 is_training(),
                                 o.bidirectional(),
                                 o.batch_first());
  return {output, {h_n, c_n}};
}

GRUImpl::GRUImpl(const GRUOptions& options) : RNNImplBase(options, 3) { reset(); }

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  const auto& o = options;
  return gru(input,
             hx,
             flat_weights_,
             o.bias(),
             o.num_layers(),
             o.dropout(),
             is_training(),
             o.bidirectional(),
             o.batch_first());
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options) : RNNCellImplBase(options, 1) {
  TANDEM_CHECK(options.nonlinearity() == kTanh || options.nonlinearity() == kReLU,
               "RNNCell: nonlinearity must be kTanh or kReLU");
  reset();
}

Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  auto fn = options.nonlinearity() == kReLU ? rnn_relu_cell : rnn_tanh_cell;
  return fn(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options) : RNNCellImplBase(options, 4) {
  reset();
}

std::tuple<Tensor, Tensor> LSTMCellImpl::forward(
    const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx_opt) {
  std::vector<Tensor> hx;
  if (hx_opt) hx = {std::get<0>(*hx_opt), std::get<1>(*hx_opt)};
  return lstm_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options) : RNNCellImplBase(options, 3) {
  reset();
}

Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  return gru_cell(input, hx, weight_ih, weight_hh, bias_ih, bias_hh);
}

}  // namespace tandem::nn
