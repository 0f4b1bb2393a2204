// Recurrent layers and cells with ATen's signatures (torch::lstm,
// torch::gru, torch::rnn_tanh, torch::rnn_relu and their *_cell), in
// float32 and float64. Gates are in PyTorch's order (LSTM: i, f, g, o; GRU:
// r, z, n with n = tanh(W_in x + b_in + r * (W_hn h + b_hn))). `params`
// holds, for each layer and then each direction, w_ih [G * H, in], w_hh
// [G * H, H] and, with has_biases, b_ih and b_hh [G * H] (G = 4 for LSTM, 3
// for GRU, 1 for RNN). Input is [T, B, I] ([B, T, I] with batch_first) or
// unbatched [T, I]; states are [num_layers * directions, B, H] (or without
// B), zeros when not given. Dropout applies between layers when `train`.
//
//   auto [out, h_n, c_n] = tandem::lstm(x, {h0, c0}, params, /*has_biases=*/true,
//                                      /*num_layers=*/2, /*dropout=*/0.5,
//                                      /*train=*/true, /*bidirectional=*/false,
//                                      /*batch_first=*/false);
//   auto [h1, c1] = tandem::lstm_cell(x_t, {h, c}, w_ih, w_hh, b_ih, b_hh);
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem {

/// Returns (output, h_n, c_n); output is [T, B, directions * H].
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input,
                                        const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params,
                                        bool has_biases,
                                        int64_t num_layers,
                                        double dropout,
                                        bool train,
                                        bool bidirectional,
                                        bool batch_first);
/// Returns (output, h_n); hx may be undefined (zeros).
std::tuple<Tensor, Tensor> gru(const Tensor& input,
                               const Tensor& hx,
                               const std::vector<Tensor>& params,
                               bool has_biases,
                               int64_t num_layers,
                               double dropout,
                               bool train,
                               bool bidirectional,
                               bool batch_first);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input,
                                    const Tensor& hx,
                                    const std::vector<Tensor>& params,
                                    bool has_biases,
                                    int64_t num_layers,
                                    double dropout,
                                    bool train,
                                    bool bidirectional,
                                    bool batch_first);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input,
                                    const Tensor& hx,
                                    const std::vector<Tensor>& params,
                                    bool has_biases,
                                    int64_t num_layers,
                                    double dropout,
                                    bool train,
                                    bool bidirectional,
                                    bool batch_first);

/// One step: input [B, I] or [I], hx = {h, c} ([B, H] or [H]; empty for
/// zeros). Returns (h', c').
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input,
                                     const std::vector<Tensor>& hx,
                                     const Tensor& w_ih,
                                     const Tensor& w_hh,
                                     const Tensor& b_ih = {},
                                     const Tensor& b_hh = {});
/// One step; hx undefined means zeros. Returns h'.
Tensor gru_cell(const Tensor& input,
                const Tensor& hx,
                const Tensor& w_ih,
                const Tensor& w_hh,
                const Tensor& b_ih = {},
                const Tensor& b_hh = {});
Tensor rnn_tanh_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih = {},
                     const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input,
                     const Tensor& hx,
                     const Tensor& w_ih,
                     const Tensor& w_hh,
                     const Tensor& b_ih = {},
                     const Tensor& b_hh = {});

}  // namespace tandem
