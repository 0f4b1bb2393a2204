// Private: one recurrent layer in one direction, the fused unit that
// rnn.cpp composes into tandem::lstm / gru / rnn_tanh / rnn_relu (layers,
// directions, dropout) and into the cells (one time step). Arguments are
// checked by the caller. See Note [Fused recurrent layers] in
// rnn_layer.cpp.
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::detail {

enum class RnnMode { Tanh, Relu, Lstm, Gru };

/// How many gates of `hidden` units a layer's projections have (1, 4, 3).
int64_t gate_count(RnnMode mode);
/// "rnn_tanh", "rnn_relu", "lstm", "gru".
const char* mode_name(RnnMode mode);

/// A layer's parameters in PyTorch's layout: w_ih [G * H, I], w_hh
/// [G * H, H], biases [G * H] or undefined.
struct RnnLayerWeights {
  Tensor w_ih;
  Tensor w_hh;
  Tensor b_ih;
  Tensor b_hh;
};

struct RnnLayerResult {
  Tensor output;  // [T, B, H]: h at every time step
  Tensor h_n;     // [B, H]: the last step's h (the first time step when reverse)
  Tensor c_n;     // [B, H]: LSTM only
};

/// Runs the layer over time-major `input` [T, B, I] from h0 (and, for LSTM,
/// c0) [B, H], from the last time step to the first when `reverse`. One
/// autograd node covers the whole layer.
RnnLayerResult rnn_layer(RnnMode mode,
                         const Tensor& input,
                         const Tensor& h0,
                         const Tensor& c0,
                         const RnnLayerWeights& weights,
                         bool reverse);

}  // namespace tandem::detail
