// The recurrent ops of tandem/ops/rnn.h: argument checks in PyTorch's
// terms, then layers, directions and dropout composed over rnn_layer (see
// Note [Fused recurrent layers] in rnn_layer.cpp); a cell is one layer of
// one time step.
#include "tandem/ops/rnn.h"

#include <string>

#include "ops/op_utils.h"
#include "ops/rnn_layer.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using detail::RnnLayerResult;
using detail::RnnLayerWeights;
using detail::RnnMode;

struct LayerArgs {
  bool has_biases;
  int64_t num_layers;
  double dropout;
  bool train;
  bool bidirectional;
  bool batch_first;
};

struct RnnResult {
  Tensor output, h_n, c_n;
};

// PyTorch's parameter name: weight_ih_l0, bias_hh_l1_reverse, ... (the
// cells' ATen arguments w_ih, b_hh, ... when `layer` is negative).
std::string param_name(int kind, int64_t layer, bool reverse) {
  static const char* const kLayer[] = {"weight_ih", "weight_hh", "bias_ih", "bias_hh"};
  static const char* const kCell[] = {"w_ih", "w_hh", "b_ih", "b_hh"};
  if (layer < 0) return kCell[kind];
  return detail::str(kLayer[kind], "_l", layer, reverse ? "_reverse" : "");
}

void check_shape(const char* op,
                 const Tensor& t,
                 const std::string& name,
                 const IntList& want) {
  detail::check_defined(op, t, name.c_str());
  TANDEM_CHECK(t.sizes() == want,
               op,
               ": expected ",
               name,
               " of shape ",
               want,
               ", got ",
               t.sizes());
}

// The hidden size, from the first w_hh ([G * H, H]).
int64_t hidden_size(const char* op,
                    RnnMode mode,
                    const Tensor& w_hh,
                    const std::string& name) {
  detail::check_defined(op, w_hh, name.c_str());
  const int64_t gates = detail::gate_count(mode);
  TANDEM_CHECK(w_hh.dim() == 2 && w_hh.size(0) == gates * w_hh.size(1),
               op,
               ": expected ",
               name,
               " of shape [",
               gates,
               " * hidden_size, hidden_size], got ",
               w_hh.sizes());
  return w_hh.size(1);
}

// One layer's weights against the sizes they must have; `layer` < 0 for a
// cell's.
void check_weights(const char* op,
                   RnnMode mode,
                   const RnnLayerWeights& w,
                   int64_t in_size,
                   int64_t h,
                   int64_t layer,
                   bool reverse,
                   bool has_biases) {
  const int64_t width = detail::gate_count(mode) * h;
  check_shape(op, w.w_ih, param_name(0, layer, reverse), {width, in_size});
  check_shape(op, w.w_hh, param_name(1, layer, reverse), {width, h});
  if (!has_biases) return;
  check_shape(op, w.b_ih, param_name(2, layer, reverse), {width});
  check_shape(op, w.b_hh, param_name(3, layer, reverse), {width});
}

void check_operands(const char* op, const Tensor& input, const std::vector<Tensor>& all) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  detail::check_same_device(op, all);
  for (const Tensor& t : all)
    detail::check_same_dtype(op, t, "every parameter and state", input, "input");
}

// The input's feature count against layer 0's w_ih, in PyTorch's words.
void check_features(const char* op,
                    const Tensor& input,
                    const Tensor& w_ih,
                    const std::string& name) {
  detail::check_defined(op, w_ih, name.c_str());
  TANDEM_CHECK(w_ih.dim() == 2 && input.size(-1) == w_ih.size(1),
               op,
               ": expected input with ",
               w_ih.dim() == 2 ? w_ih.size(1) : -1,
               " features (last dim) for ",
               name,
               " of shape ",
               w_ih.sizes(),
               ", got input of shape ",
               input.sizes());
}

// A state given by the user, checked and batched, or zeros. `want` is the
// batched shape; an unbatched input's state lacks its dim `batch_dim`.
Tensor state_or_zeros(const char* op,
                      const Tensor& state,
                      const char* name,
                      bool batched,
                      const IntList& want,
                      int64_t batch_dim,
                      const Tensor& input) {
  if (!state.defined())
    return zeros(want, TensorOptions(input.dtype()).device(input.device()));
  IntList shown = want;
  if (!batched) shown.erase(shown.begin() + batch_dim);
  TANDEM_CHECK(state.sizes() == shown,
               op,
               ": expected ",
               name,
               " of shape ",
               shown,
               " for input of shape ",
               input.sizes(),
               ", got ",
               state.sizes());
  return batched ? state : state.unsqueeze(batch_dim);
}

RnnLayerWeights layer_weights(const std::vector<Tensor>& params,
                              int64_t index,
                              bool biases) {
  const size_t per = biases ? 4 : 2, at = static_cast<size_t>(index) * per;
  return {params[at],
          params[at + 1],
          biases ? params[at + 2] : Tensor(),
          biases ? params[at + 3] : Tensor()};
}

RnnResult run(RnnMode mode,
              const Tensor& input,
              const Tensor& h0,
              const Tensor& c0,
              const std::vector<Tensor>& params,
              const LayerArgs& a) {
  const char* op = detail::mode_name(mode);
  const profiler::Span span = detail::op_span(op, {&input, &h0, &c0});
  std::vector<Tensor> all = params;
  all.insert(all.end(), {input, h0, c0});
  check_operands(op, input, all);
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               op,
               ": expected input of 2 (unbatched) or 3 dimensions, got shape ",
               input.sizes());
  TANDEM_CHECK(
      a.num_layers >= 1, op, ": num_layers must be positive, got ", a.num_layers);
  TANDEM_CHECK(a.dropout >= 0 && a.dropout <= 1,
               op,
               ": dropout must be a probability in [0, 1], got ",
               a.dropout);
  const int64_t dirs = a.bidirectional ? 2 : 1;
  const size_t want = static_cast<size_t>(a.num_layers * dirs * (a.has_biases ? 4 : 2));
  TANDEM_CHECK(params.size() == want,
               op,
               ": expected ",
               want,
               " parameter tensors for ",
               a.num_layers,
               " layer(s), ",
               dirs,
               " direction(s) and has_biases=",
               a.has_biases ? "true" : "false",
               ", got ",
               params.size());
  const bool batched = input.dim() == 3;
  Tensor x =
      batched ? (a.batch_first ? input.transpose(0, 1) : input) : input.unsqueeze(1);
  TANDEM_CHECK(x.size(0) >= 1,
               op,
               ": expected a sequence of at least one step, got input of shape ",
               input.sizes());
  check_features(op, input, params[0], param_name(0, 0, false));
  const int64_t h = hidden_size(op, mode, params[1], param_name(1, 0, false));
  const IntList state_shape{a.num_layers * dirs, x.size(1), h};
  const Tensor hx = state_or_zeros(op, h0, "h0", batched, state_shape, 1, input);
  const Tensor cx = mode == RnnMode::Lstm
                        ? state_or_zeros(op, c0, "c0", batched, state_shape, 1, input)
                        : Tensor();
  std::vector<Tensor> hs, cs;
  for (int64_t layer = 0; layer < a.num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < dirs; ++d) {
      const int64_t index = layer * dirs + d;
      const RnnLayerWeights w = layer_weights(params, index, a.has_biases);
      check_weights(op, mode, w, x.size(2), h, layer, d == 1, a.has_biases);
      const RnnLayerResult r =
          detail::rnn_layer(mode,
                            x,
                            hx.select(0, index),
                            cx.defined() ? cx.select(0, index) : Tensor(),
                            w,
                            d == 1);
      outs.push_back(r.output);
      hs.push_back(r.h_n);
      if (r.c_n.defined()) cs.push_back(r.c_n);
    }
    x = dirs == 2 ? cat(outs, 2) : outs[0];
    if (layer + 1 < a.num_layers) x = dropout(x, a.dropout, a.train);
  }
  RnnResult result{x, stack(hs, 0), cs.empty() ? Tensor() : stack(cs, 0)};
  if (!batched) {
    result.output = result.output.squeeze(1);
    result.h_n = result.h_n.squeeze(1);
    if (result.c_n.defined()) result.c_n = result.c_n.squeeze(1);
  } else if (a.batch_first) {
    result.output = result.output.transpose(0, 1);
  }
  return result;
}

RnnResult run_cell(RnnMode mode,
                   const char* op,
                   const Tensor& input,
                   const Tensor& h,
                   const Tensor& c,
                   const RnnLayerWeights& w) {
  const profiler::Span span = detail::op_span(op, {&input, &h, &c});
  check_operands(op, input, {input, h, c, w.w_ih, w.w_hh, w.b_ih, w.b_hh});
  TANDEM_CHECK(input.dim() == 1 || input.dim() == 2,
               op,
               ": expected input of 1 (unbatched) or 2 dimensions, got shape ",
               input.sizes());
  check_features(op, input, w.w_ih, "w_ih");
  const int64_t hidden = hidden_size(op, mode, w.w_hh, "w_hh");
  check_weights(op,
                mode,
                {w.w_ih, w.w_hh, Tensor(), Tensor()},
                input.size(-1),
                hidden,
                -1,
                false,
                false);
  const int64_t width = detail::gate_count(mode) * hidden;
  if (w.b_ih.defined()) check_shape(op, w.b_ih, "b_ih", {width});
  if (w.b_hh.defined()) check_shape(op, w.b_hh, "b_hh", {width});
  const bool batched = input.dim() == 2;
  const Tensor x = (batched ? input : input.unsqueeze(0)).unsqueeze(0);
  auto state = [&](const Tensor& s, const char* name) {
    return state_or_zeros(op, s, name, batched, {x.size(1), hidden}, 0, input);
  };
  const Tensor hx = state(h, "hx");
  const Tensor cx = mode == RnnMode::Lstm ? state(c, "cx") : Tensor();
  const RnnLayerResult r = detail::rnn_layer(mode, x, hx, cx, w, false);
  if (batched) return {Tensor(), r.h_n, r.c_n};
  return {Tensor(), r.h_n.squeeze(0), r.c_n.defined() ? r.c_n.squeeze(0) : Tensor()};
}

Tensor first_or_undefined(const std::vector<Tensor>& hx, size_t i, const char* op) {
  TANDEM_CHECK(hx.empty() || hx.size() == 2,
               op,
               ": expected hx to hold two tensors (h and c) or none, got ",
               hx.size());
  return hx.empty() ? Tensor() : hx[i];
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input,
                                        const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params,
                                        bool has_biases,
                                        int64_t num_layers,
                                        double dropout,
                                        bool train,
                                        bool bidirectional,
                                        bool batch_first) {
  const RnnResult r =
      run(RnnMode::Lstm,
          input,
          first_or_undefined(hx, 0, "lstm"),
          first_or_undefined(hx, 1, "lstm"),
          params,
          {has_biases, num_layers, dropout, train, bidirectional, batch_first});
  return {r.output, r.h_n, r.c_n};
}

std::tuple<Tensor, Tensor> gru(const Tensor& input,
                               const Tensor& hx,
                               const std::vector<Tensor>& params,
                               bool has_biases,
                               int64_t num_layers,
                               double dropout,
                               bool train,
                               bool bidirectional,
                               bool batch_first) {
  const RnnResult r =
      run(RnnMode::Gru,
          input,
          hx,
          Tensor(),
          params,
          {has_biases, num_layers, dropout, train, bidirectional, batch_first});
  return {r.output, r.h_n};
}

std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input,
                                    const Tensor& hx,
                                    const std::vector<Tensor>& params,
                                    bool has_biases,
                                    int64_t num_layers,
                                    double dropout,
                                    bool train,
                                    bool bidirectional,
                                    bool batch_first) {
  const RnnResult r =
      run(RnnMode::Tanh,
          input,
          hx,
          Tensor(),
          params,
          {has_biases, num_layers, dropout, train, bidirectional, batch_first});
  return {r.output, r.h_n};
}

std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input,
                                    const Tensor& hx,
                                    const std::vector<Tensor>& params,
                                    bool has_biases,
                                    int64_t num_layers,
                                    double dropout,
                                    bool train,
                                    bool bidirectional,
                                    bool batch_first) {
  const RnnResult r =
      run(RnnMode::Relu,
          input,
          hx,
          Tensor(),
          params,
          {has_biases, num_layers, dropout, train, bidirectional, batch_first});
  return {r.output, r.h_n};
}

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input,
                                     const std::vector<Tensor>& hx,
                                     const Tensor& w_ih,
                                     const Tensor& w_hh,
                                     const Tensor& b_ih,
                                     const Tensor& b_hh) {
  const RnnResult r = run_cell(RnnMode::Lstm,
                               "lstm_cell",
                               input,
                               first_or_undefined(hx, 0, "lstm_cell"),
                               first_or_undefined(hx, 1, "lstm_cell"),
                               {w_ih, w_hh, b_ih, b_hh});
  return {r.h_n, r.c_n};
}

Tensor gru_cell(const Tensor& input,
                const Tensor& hx,
                const Tensor& w_ih,
                const Tensor& w_hh,
                const Tensor& b_ih,
                const Tensor& b_hh) {
  return run_cell(RnnMode::Gru, "gru_cell", input, hx, Tensor(), {w_ih, w_hh, b_ih, b_hh})
      .h_n;
}

Tensor rnn_tanh_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell(RnnMode::Tanh,
                  "rnn_tanh_cell",
                  input,
                  hx,
                  Tensor(),
                  {w_ih, w_hh, b_ih, b_hh})
      .h_n;
}

Tensor rnn_relu_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih,
                     const Tensor& b_hh) {
  return run_cell(RnnMode::Relu,
                  "rnn_relu_cell",
                  input,
                  hx,
                  Tensor(),
                  {w_ih, w_hh, b_ih, b_hh})
      .h_n;
}

}  // namespace tandem
