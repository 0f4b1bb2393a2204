// The recurrent layers and cells on the device under test, in float32 and
// float64: outputs, final states and every input's gradient equal the
// float64 CPU reference. Rows run the fused LSTM and GRU cell kernels
// (forward and backward), tanh and relu layers, both directions, several
// layers, and a batch of many blocks (hidden 650 as in the word language
// model).
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::CudaOpCaseTest;
using testing::F;
using testing::OpCase;
using L = const std::vector<Tensor>&;

// Everything a layer returns, flattened into one tensor.
Tensor flat(const std::vector<Tensor>& parts) {
  std::vector<Tensor> f;
  for (const Tensor& t : parts) f.push_back(t.reshape({-1}));
  return cat(f, 0);
}

std::vector<Tensor> tail(L in, size_t from) { return {in.begin() + from, in.end()}; }

std::vector<OpCase> rnn_cases() {
  return {
      {"lstm_cell",
       {F({3, 4}), F({3, 5}), F({3, 5}), F({20, 4}), F({20, 5}), F({20}), F({20})},
       [](L in) {
         auto [h, c] = lstm_cell(in[0], {in[1], in[2]}, in[3], in[4], in[5], in[6]);
         return flat({h, c});
       }},
      {"gru_cell",
       {F({3, 4}), F({3, 5}), F({15, 4}), F({15, 5}), F({15}), F({15})},
       [](L in) { return gru_cell(in[0], in[1], in[2], in[3], in[4], in[5]); }},
      {"lstm_two_layers_bidirectional",
       {F({4, 3, 2}),
        F({4, 3, 5}),
        F({4, 3, 5}),
        F({20, 2}),
        F({20, 5}),
        F({20}),
        F({20}),
        F({20, 2}),
        F({20, 5}),
        F({20}),
        F({20}),
        F({20, 10}),
        F({20, 5}),
        F({20}),
        F({20}),
        F({20, 10}),
        F({20, 5}),
        F({20}),
        F({20})},
       [](L in) {
         auto [out, h, c] =
             lstm(in[0], {in[1], in[2]}, tail(in, 3), true, 2, 0.0, true, true, false);
         return flat({out, h, c});
       }},
      {"gru_batch_first_no_bias",
       {F({3, 4, 2}), F({15, 2}), F({15, 5})},
       [](L in) {
         auto [out, h] = gru(in[0], {}, tail(in, 1), false, 1, 0.0, true, false, true);
         return flat({out, h});
       }},
      {"rnn_tanh_and_relu",
       {F({4, 3, 2}), F({5, 2}), F({5, 5}), F({5}), F({5})},
       [](L in) {
         auto [a, ha] =
             rnn_tanh(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false);
         auto [b, hb] =
             rnn_relu(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false);
         return flat({a, ha, b, hb});
       }},
      {"lstm_hidden_650",
       {F({3, 20, 8}), F({2600, 8}), F({2600, 650}), F({2600}), F({2600})},
       [](L in) {
         return std::get<0>(
             lstm(in[0], {}, tail(in, 1), true, 1, 0.0, true, false, false));
       }},
  };
}

class CudaRnnGradients : public CudaOpCaseTest {};

TEST_P(CudaRnnGradients, Float32MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat32);
}

TEST_P(CudaRnnGradients, Float64MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat64);
}

INSTANTIATE_TEST_SUITE_P(Rnn,
                         CudaRnnGradients,
                         ::testing::ValuesIn(rnn_cases()),
                         testing::case_name);

}  // namespace
}  // namespace tandem
