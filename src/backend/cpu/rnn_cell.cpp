// CPU recurrent cell kernels: one time step's gate arithmetic over a batch,
// the formulas of backend/rnn_cell_math.h run row by row, split across the
// device's threads when a step is large enough (parallel_over).
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"
#include "backend/rnn_cell_math.h"

namespace tandem::backend::cpu {
namespace {

// Per-element cost of a cell in cheap operations (a few exp/tanh each).
constexpr int64_t kCellCost = 40;

// Calls fn(row, j) for every hidden unit j of every batch row of `state`
// ([B, hidden]), with T the dtype's C++ type.
template <typename Fn>
void for_each_unit(const Tensor& state, const char* op, Fn&& fn) {
  const int64_t rows = state.size(0), hidden = state.size(1);
  dispatch_floating(state.dtype(), op, [&]<typename T>() {
    parallel_over(rows, hidden * kCellCost, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        for (int64_t j = 0; j < hidden; ++j) fn.template operator()<T>(b, hidden, j);
      }
    });
  });
}

// Row b of a contiguous [B, width] tensor (null when undefined).
template <typename T>
T* row(const Tensor& t, int64_t b) {
  return t.defined() ? t.data_ptr<T>() + b * t.size(1) : nullptr;
}

}  // namespace

void lstm_cell(const Tensor& gates,
               const Tensor& c_prev,
               const Tensor& h,
               const Tensor& c) {
  for_each_unit(h, "lstm_cell", [&]<typename T>(int64_t b, int64_t hidden, int64_t j) {
    rnn_cell_math::lstm_forward<T>(
        hidden, j, row<T>(gates, b), row<T>(c_prev, b), row<T>(h, b), row<T>(c, b));
  });
}

void lstm_cell_backward(const Tensor& grad_gates,
                        const Tensor& grad_c_prev,
                        const Tensor& grad_h,
                        const Tensor& grad_c,
                        const Tensor& gates,
                        const Tensor& c_prev,
                        const Tensor& c) {
  for_each_unit(
      c, "lstm_cell_backward", [&]<typename T>(int64_t b, int64_t hidden, int64_t j) {
        rnn_cell_math::lstm_backward<T>(hidden,
                                        j,
                                        row<T>(grad_gates, b),
                                        row<T>(grad_c_prev, b),
                                        row<T>(grad_h, b),
                                        row<T>(grad_c, b),
                                        row<T>(gates, b),
                                        row<T>(c_prev, b),
                                        row<T>(c, b));
      });
}

void gru_cell(const Tensor& input_gates,
              const Tensor& hidden_gates,
              const Tensor& h_prev,
              const Tensor& h) {
  for_each_unit(h, "gru_cell", [&]<typename T>(int64_t b, int64_t hidden, int64_t j) {
    rnn_cell_math::gru_forward<T>(hidden,
                                  j,
                                  row<T>(input_gates, b),
                                  row<T>(hidden_gates, b),
                                  row<T>(h_prev, b),
                                  row<T>(h, b));
  });
}

void gru_cell_backward(const Tensor& grad_input_gates,
                       const Tensor& grad_hidden_gates,
                       const Tensor& grad_h_prev,
                       const Tensor& grad_h,
                       const Tensor& gates,
                       const Tensor& hidden_gates,
                       const Tensor& h_prev) {
  for_each_unit(
      h_prev, "gru_cell_backward", [&]<typename T>(int64_t b, int64_t hidden, int64_t j) {
        rnn_cell_math::gru_backward<T>(hidden,
                                       j,
                                       row<T>(grad_input_gates, b),
                                       row<T>(grad_hidden_gates, b),
                                       row<T>(grad_h_prev, b),
                                       row<T>(grad_h, b),
                                       row<T>(gates, b),
                                       row<T>(hidden_gates, b),
                                       row<T>(h_prev, b));
      });
}

}  // namespace tandem::backend::cpu
