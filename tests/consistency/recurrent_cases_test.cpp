// The op table's recurrent rows (tandem/ops/rnn.h): the fused LSTM and GRU
// cell kernels forward and backward, tanh and relu layers, both
// directions, several layers, batch_first, no bias, and hidden 650 as in
// the word language model. The fused cells have no double backward, as
// PyTorch's cuDNN RNN. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Everything a layer returns, flattened into one tensor.
Tensor flat(const tensor_list& parts) {
  tensor_list f;
  for (const Tensor& t : parts) f.push_back(t.reshape({-1}));
  return cat(f, 0);
}

tensor_list tail(L in, size_t from) {
  return {in.begin() + static_cast<std::ptrdiff_t>(from), in.end()};
}

// The weights of one LSTM layer and direction: w_ih, w_hh, b_ih, b_hh.
std::vector<Input> lstm_weights(int64_t input, int64_t hidden) {
  return {
      F({4 * hidden, input}), F({4 * hidden, hidden}), F({4 * hidden}), F({4 * hidden})};
}

// Input [4, 3, 2], h0 and c0 [4, 3, 5], then two layers of two directions.
std::vector<Input> two_layer_bidirectional_lstm_inputs() {
  std::vector<Input> in = {F({4, 3, 2}), F({4, 3, 5}), F({4, 3, 5})};
  for (const int64_t input : {2, 2, 10, 10}) {
    for (const Input& w : lstm_weights(input, 5)) in.push_back(w);
  }
  return in;
}

std::vector<OpCase> rows() {
  return {
      {"lstm_cell",
       {F({3, 4}), F({3, 5}), F({3, 5}), F({20, 4}), F({20, 5}), F({20}), F({20})},
       [](L in) {
         auto [h, c] = lstm_cell(in[0], {in[1], in[2]}, in[3], in[4], in[5], in[6]);
         return flat({h, c});
       },
       kNoDoubleBackward},
      {"gru_cell",
       {F({3, 4}), F({3, 5}), F({15, 4}), F({15, 5}), F({15}), F({15})},
       [](L in) { return gru_cell(in[0], in[1], in[2], in[3], in[4], in[5]); },
       kNoDoubleBackward},
      {"lstm_bidirectional_batch_first",
       {F({2, 4, 3}), F({16, 3}), F({16, 4}), F({16, 3}), F({16, 4})},
       [](L in) {
         return std::get<0>(
             lstm(in[0], {}, tail(in, 1), false, 1, 0.0, true, true, true));
       },
       kNoDoubleBackward},
      {"lstm_two_layers_bidirectional",
       two_layer_bidirectional_lstm_inputs(),
       [](L in) {
         auto [out, h, c] =
             lstm(in[0], {in[1], in[2]}, tail(in, 3), true, 2, 0.0, true, true, false);
         return flat({out, h, c});
       },
       kNoDoubleBackward},
      {"gru_batch_first_no_bias",
       {F({3, 4, 2}), F({15, 2}), F({15, 5})},
       [](L in) {
         auto [out, h] = gru(in[0], {}, tail(in, 1), false, 1, 0.0, true, false, true);
         return flat({out, h});
       },
       kNoDoubleBackward},
      {"rnn_tanh_and_relu",
       {F({4, 3, 2}), F({5, 2}), F({5, 5}), F({5}), F({5})},
       [](L in) {
         auto [a, ha] =
             rnn_tanh(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false);
         auto [b, hb] =
             rnn_relu(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false);
         return flat({a, ha, b, hb});
       },
       kNoDoubleBackward},
      {"lstm_hidden_650",
       {F({3, 20, 8}), F({2600, 8}), F({2600, 650}), F({2600}), F({2600})},
       [](L in) {
         return std::get<0>(
             lstm(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false));
       },
       {.no_finite_differences = kTooLarge, .second_derivatives = false}},
  };
}

INSTANTIATE_TEST_SUITE_P(Recurrent, OpTable, ::testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace tandem::testing::op_table
