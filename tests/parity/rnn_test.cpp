// Recurrent layers and cells against PyTorch (tests/reference/rnn.py): the
// modules take PyTorch's parameters by name (so the names must be
// LibTorch's), run on the same input and states, and must give the same
// results and gradients of input, states and every parameter, in float32
// and float64.
#include <functional>
#include <memory>

#include "parity/parity.h"

namespace tandem {
namespace {

using parity::Golden;
using parity::golden_at;
using parity::matches;

using Forward =
    std::function<std::vector<Tensor>(const Tensor&, const std::vector<Tensor>&)>;

struct Case {
  std::string name;
  std::function<std::pair<std::shared_ptr<nn::Module>, Forward>()> make;
};

// A layer module's results: output, then h_n (and c_n).
template <typename Holder>
std::pair<std::shared_ptr<nn::Module>, Forward> layer(Holder m) {
  return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
            auto [out, h] = m->forward(x, s.empty() ? Tensor() : s[0]);
            return std::vector<Tensor>{out, h};
          }};
}

std::pair<std::shared_ptr<nn::Module>, Forward> lstm(nn::LSTMOptions o) {
  nn::LSTM m(o);
  return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
            std::optional<std::tuple<Tensor, Tensor>> hx;
            if (!s.empty()) hx = std::make_tuple(s[0], s[1]);
            auto [out, state] = m->forward(x, hx);
            return std::vector<Tensor>{out, std::get<0>(state), std::get<1>(state)};
          }};
}

std::pair<std::shared_ptr<nn::Module>, Forward> lstm_cell() {
  nn::LSTMCell m(3, 4);
  return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
            std::optional<std::tuple<Tensor, Tensor>> hx;
            if (!s.empty()) hx = std::make_tuple(s[0], s[1]);
            auto [h, c] = m->forward(x, hx);
            return std::vector<Tensor>{h, c};
          }};
}

template <typename Holder>
std::pair<std::shared_ptr<nn::Module>, Forward> cell(Holder m) {
  return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& s) mutable {
            return std::vector<Tensor>{m->forward(x, s.empty() ? Tensor() : s[0])};
          }};
}

std::vector<Case> cases() {
  using nn::GRUOptions;
  using nn::LSTMOptions;
  using nn::RNNOptions;
  return {
      {"lstm", [] { return lstm(LSTMOptions(3, 4)); }},
      {"lstm_zero_state", [] { return lstm(LSTMOptions(3, 4)); }},
      {"lstm_two_layers_bidirectional_batch_first",
       [] {
         return lstm(
             LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
       }},
      {"lstm_no_bias", [] { return lstm(LSTMOptions(3, 4).bias(false)); }},
      {"lstm_unbatched", [] { return lstm(LSTMOptions(3, 4).num_layers(2)); }},
      {"gru", [] { return layer(nn::GRU(3, 4)); }},
      {"gru_two_layers_bidirectional",
       [] { return layer(nn::GRU(GRUOptions(3, 4).num_layers(2).bidirectional(true))); }},
      {"gru_batch_first_no_bias",
       [] { return layer(nn::GRU(GRUOptions(3, 4).batch_first(true).bias(false))); }},
      {"rnn_tanh_two_layers",
       [] { return layer(nn::RNN(RNNOptions(3, 4).num_layers(2))); }},
      {"rnn_relu_bidirectional",
       [] {
         return layer(nn::RNN(RNNOptions(3, 4).nonlinearity(kReLU).bidirectional(true)));
       }},
      {"lstm_cell", [] { return lstm_cell(); }},
      {"lstm_cell_zero_state", [] { return lstm_cell(); }},
      {"gru_cell", [] { return cell(nn::GRUCell(3, 4)); }},
      {"rnn_cell_tanh", [] { return cell(nn::RNNCell(3, 4)); }},
      {"rnn_cell_relu_no_bias",
       [] {
         return cell(
             nn::RNNCell(nn::RNNCellOptions(3, 4).bias(false).nonlinearity(kReLU)));
       }},
      {"gru_cell_unbatched", [] { return cell(nn::GRUCell(3, 4)); }},
  };
}

class RnnParity : public ::testing::TestWithParam<std::string> {};

TEST_P(RnnParity, ResultsAndGradientsMatchPyTorch) {
  const std::string dtype_name = GetParam();
  const Golden g = testing::load_golden("rnn_" + dtype_name + ".txt");
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + " in " + dtype_name);
    auto [module, forward] = c.make();
    module->to(parity::dtype_named(dtype_name));
    size_t golden_params = 0;
    for (const auto& [key, value] : g) {
      golden_params += key.rfind(c.name + ".param.", 0) == 0 ? 1 : 0;
    }
    EXPECT_EQ(module->parameters().size(), golden_params);
    {
      NoGradGuard no_grad;
      for (auto& p : module->named_parameters()) {
        p.value().copy_(golden_at(g, c.name + ".param." + p.key()));
      }
    }
    Tensor x = golden_at(g, c.name + ".input").clone().requires_grad_();
    std::vector<Tensor> states;
    for (const char* s : {".h0", ".c0"}) {
      if (g.count(c.name + s))
        states.push_back(golden_at(g, c.name + s).clone().requires_grad_());
    }
    const std::vector<Tensor> outs = forward(x, states);
    Tensor loss = zeros({}, parity::dtype_named(dtype_name));
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string at = c.name + ".out." + std::to_string(k);
      EXPECT_TRUE(matches(outs[k], golden_at(g, at))) << at;
      loss = loss + (outs[k] * golden_at(g, c.name + ".gout." + std::to_string(k))).sum();
    }
    EXPECT_FALSE(g.count(c.name + ".out." + std::to_string(outs.size())));
    loss.backward();
    EXPECT_TRUE(matches(x.grad(), golden_at(g, c.name + ".grad.input")));
    const char* names[] = {"h0", "c0"};
    for (size_t i = 0; i < states.size(); ++i) {
      EXPECT_TRUE(matches(states[i].grad(), golden_at(g, c.name + ".grad." + names[i])))
          << names[i];
    }
    for (const auto& p : module->named_parameters()) {
      EXPECT_TRUE(
          matches(p.value().grad(), golden_at(g, c.name + ".grad.param." + p.key())))
          << p.key();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtypes, RnnParity, ::testing::Values("float32", "float64"));

}  // namespace
}  // namespace tandem
