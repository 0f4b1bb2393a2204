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

// Calls fn(b, hidden) with T the dtype's C++ type for every batch row b of
// `state` ([B, hidden]); fn loops over the row's units itself, so the row
// pointers are computed once per row.
template <typename Fn>
void for_each_row(const Tensor& state, const char* op, Fn&& fn) {
  const int64_t rows = state.size(0), hidden = state.size(1);
  dispatch_floating(state.dtype(), op, [&]<typename T>() {
    parallel_over(rows, hidden * kCellCost, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) fn.template operator()<T>(b, hidden);
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
  for_each_row(h, "lstm_cell", [&]<typename T>(int64_t b, int64_t hidden) {
    T* g = row<T>(gates, b);
    const T* cp = row<T>(c_prev, b);
    T *ho = row<T>(h, b), *co = row<T>(c, b);
    for (int64_t j = 0; j < hidden; ++j)
      rnn_cell_math::lstm_forward<T>(hidden, j, g, cp, ho, co);
  });
}

void lstm_cell_backward(const Tensor& grad_gates,
                        const Tensor& grad_c_prev,
                        const Tensor& grad_h,
                        const Tensor& grad_c,
                        const Tensor& gates,
                        const Tensor& c_prev,
                        const Tensor& c) {
  for_each_row(c, "lstm_cell_backward", [&]<typename T>(int64_t b, int64_t hidden) {
    T *gg = row<T>(grad_gates, b), *gcp = row<T>(grad_c_prev, b);
    const T *gh = row<T>(grad_h, b), *gc = row<T>(grad_c, b), *g = row<T>(gates, b);
    const T *cp = row<T>(c_prev, b), *co = row<T>(c, b);
    for (int64_t j = 0; j < hidden; ++j) {
      rnn_cell_math::lstm_backward<T>(hidden, j, gg, gcp, gh, gc, g, cp, co);
    }
  });
}

void gru_cell(const Tensor& input_gates,
              const Tensor& hidden_gates,
              const Tensor& h_prev,
              const Tensor& h) {
  for_each_row(h, "gru_cell", [&]<typename T>(int64_t b, int64_t hidden) {
    T* ig = row<T>(input_gates, b);
    const T *hg = row<T>(hidden_gates, b), *hp = row<T>(h_prev, b);
    T* ho = row<T>(h, b);
    for (int64_t j = 0; j < hidden; ++j)
      rnn_cell_math::gru_forward<T>(hidden, j, ig, hg, hp, ho);
  });
}

void gru_cell_backward(const Tensor& grad_input_gates,
                       const Tensor& grad_hidden_gates,
                       const Tensor& grad_h_prev,
                       const Tensor& grad_h,
                       const Tensor& gates,
                       const Tensor& hidden_gates,
                       const Tensor& h_prev) {
  for_each_row(h_prev, "gru_cell_backward", [&]<typename T>(int64_t b, int64_t hidden) {
    T *gig = row<T>(grad_input_gates, b), *ghg = row<T>(grad_hidden_gates, b);
    T* ghp = row<T>(grad_h_prev, b);
    const T *gh = row<T>(grad_h, b), *g = row<T>(gates, b), *hg = row<T>(hidden_gates, b);
    const T* hp = row<T>(h_prev, b);
    for (int64_t j = 0; j < hidden; ++j) {
      rnn_cell_math::gru_backward<T>(hidden, j, gig, ghg, ghp, gh, g, hg, hp);
    }
  });
}

}  // namespace tandem::backend::cpu
