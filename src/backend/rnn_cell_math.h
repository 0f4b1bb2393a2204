// Private: the per-element formulas of the fused recurrent cells (the
// lstm_cell and gru_cell kernels of backend/dispatch.h), compiled for the
// host by the CPU backend and for the GPU by the CUDA backend, so both run
// the same arithmetic. Each function handles hidden unit j of one batch row;
// a gate row holds the gates side by side in PyTorch's order (LSTM: i, f, g,
// o; GRU: r, z, n), each `hidden` wide.
//
//   for (int64_t j = 0; j < hidden; ++j)
//     rnn_cell_math::lstm_forward(hidden, j, gates_row, c_prev_row, h_row, c_row);
#pragma once

#include <cmath>
#include <cstdint>

#include "backend/scalar_math.h"

namespace tandem::backend::rnn_cell_math {

template <typename T>
TANDEM_SCALAR_FN T sigmoid(T x) {
  return T(1) / (T(1) + TANDEM_SCALAR_MATH(exp)(-x));
}

template <typename T>
TANDEM_SCALAR_FN T tanh_of(T x) {
  return TANDEM_SCALAR_MATH(tanh)(x);
}

/// c = f * c_prev + i * g, h = o * tanh(c), from the summed pre-activations
/// in `gates`, which are overwritten with the activated gates (what the
/// backward reads).
template <typename T>
TANDEM_SCALAR_FN void lstm_forward(
    int64_t hidden, int64_t j, T* gates, const T* c_prev, T* h, T* c) {
  const T i = sigmoid(gates[j]);
  const T f = sigmoid(gates[hidden + j]);
  const T g = tanh_of(gates[2 * hidden + j]);
  const T o = sigmoid(gates[3 * hidden + j]);
  gates[j] = i;
  gates[hidden + j] = f;
  gates[2 * hidden + j] = g;
  gates[3 * hidden + j] = o;
  const T cell = f * c_prev[j] + i * g;
  c[j] = cell;
  h[j] = o * tanh_of(cell);
}

/// The gradients of the pre-activation gates and of c_prev from those of h
/// and c (`grad_c` null: zero), given the activated gates, c_prev and c.
template <typename T>
TANDEM_SCALAR_FN void lstm_backward(int64_t hidden,
                                    int64_t j,
                                    T* grad_gates,
                                    T* grad_c_prev,
                                    const T* grad_h,
                                    const T* grad_c,
                                    const T* gates,
                                    const T* c_prev,
                                    const T* c) {
  const T i = gates[j], f = gates[hidden + j];
  const T g = gates[2 * hidden + j], o = gates[3 * hidden + j];
  const T tc = tanh_of(c[j]);
  const T gh = grad_h[j];
  const T gc = (grad_c != nullptr ? grad_c[j] : T(0)) + gh * o * (T(1) - tc * tc);
  grad_gates[j] = gc * g * i * (T(1) - i);
  grad_gates[hidden + j] = gc * c_prev[j] * f * (T(1) - f);
  grad_gates[2 * hidden + j] = gc * i * (T(1) - g * g);
  grad_gates[3 * hidden + j] = gh * tc * o * (T(1) - o);
  grad_c_prev[j] = gc * f;
}

/// r = sigmoid(x_r + h_r), z = sigmoid(x_z + h_z), n = tanh(x_n + r * h_n),
/// h = (1 - z) * n + z * h_prev, where x_* are `input_gates` (x W_ih^T +
/// b_ih) and h_* `hidden_gates` (h_prev W_hh^T + b_hh). input_gates is
/// overwritten with r, z, n; hidden_gates is kept (the backward reads h_n).
template <typename T>
TANDEM_SCALAR_FN void gru_forward(int64_t hidden,
                                  int64_t j,
                                  T* input_gates,
                                  const T* hidden_gates,
                                  const T* h_prev,
                                  T* h) {
  const T r = sigmoid(input_gates[j] + hidden_gates[j]);
  const T z = sigmoid(input_gates[hidden + j] + hidden_gates[hidden + j]);
  const T n = tanh_of(input_gates[2 * hidden + j] + r * hidden_gates[2 * hidden + j]);
  input_gates[j] = r;
  input_gates[hidden + j] = z;
  input_gates[2 * hidden + j] = n;
  h[j] = (T(1) - z) * n + z * h_prev[j];
}

/// The gradients of input_gates and hidden_gates from that of h, given
/// gates = (r, z, n), hidden_gates and h_prev; adds h_prev's direct share
/// (grad_h * z) into grad_h_prev.
template <typename T>
TANDEM_SCALAR_FN void gru_backward(int64_t hidden,
                                   int64_t j,
                                   T* grad_input_gates,
                                   T* grad_hidden_gates,
                                   T* grad_h_prev,
                                   const T* grad_h,
                                   const T* gates,
                                   const T* hidden_gates,
                                   const T* h_prev) {
  const T r = gates[j], z = gates[hidden + j], n = gates[2 * hidden + j];
  const T gh = grad_h[j];
  const T grad_n = gh * (T(1) - z) * (T(1) - n * n);
  const T grad_r = grad_n * hidden_gates[2 * hidden + j] * r * (T(1) - r);
  const T grad_z = gh * (h_prev[j] - n) * z * (T(1) - z);
  grad_input_gates[j] = grad_r;
  grad_input_gates[hidden + j] = grad_z;
  grad_input_gates[2 * hidden + j] = grad_n;
  grad_hidden_gates[j] = grad_r;
  grad_hidden_gates[hidden + j] = grad_z;
  grad_hidden_gates[2 * hidden + j] = grad_n * r;
  grad_h_prev[j] += gh * z;
}

}  // namespace tandem::backend::rnn_cell_math
