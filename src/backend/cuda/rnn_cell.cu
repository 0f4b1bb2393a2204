// CUDA recurrent cell kernels: one time step's gate arithmetic over a
// batch, one thread per (row, hidden unit), running the formulas of
// backend/rnn_cell_math.h (the CPU kernels' own).
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"
#include "backend/rnn_cell_math.h"

namespace tandem::backend::cuda {
namespace {

template <typename T>
struct LstmForward {
  T* gates;
  const T* c_prev;
  T* h;
  T* c;
  __device__ void operator()(int64_t b, int64_t hidden, int64_t j) const {
    rnn_cell_math::lstm_forward<T>(hidden,
                                   j,
                                   gates + b * 4 * hidden,
                                   c_prev + b * hidden,
                                   h + b * hidden,
                                   c + b * hidden);
  }
};

template <typename T>
struct LstmBackward {
  T* grad_gates;
  T* grad_c_prev;
  const T* grad_h;
  const T* grad_c;  // may be null
  const T* gates;
  const T* c_prev;
  const T* c;
  __device__ void operator()(int64_t b, int64_t hidden, int64_t j) const {
    const int64_t s = b * hidden, g = 4 * s;
    rnn_cell_math::lstm_backward<T>(hidden,
                                    j,
                                    grad_gates + g,
                                    grad_c_prev + s,
                                    grad_h + s,
                                    grad_c != nullptr ? grad_c + s : nullptr,
                                    gates + g,
                                    c_prev + s,
                                    c + s);
  }
};

template <typename T>
struct GruForward {
  T* input_gates;
  const T* hidden_gates;
  const T* h_prev;
  T* h;
  __device__ void operator()(int64_t b, int64_t hidden, int64_t j) const {
    const int64_t s = b * hidden, g = 3 * s;
    rnn_cell_math::gru_forward<T>(
        hidden, j, input_gates + g, hidden_gates + g, h_prev + s, h + s);
  }
};

template <typename T>
struct GruBackward {
  T* grad_input_gates;
  T* grad_hidden_gates;
  T* grad_h_prev;
  const T* grad_h;
  const T* gates;
  const T* hidden_gates;
  const T* h_prev;
  __device__ void operator()(int64_t b, int64_t hidden, int64_t j) const {
    const int64_t s = b * hidden, g = 3 * s;
    rnn_cell_math::gru_backward<T>(hidden,
                                   j,
                                   grad_input_gates + g,
                                   grad_hidden_gates + g,
                                   grad_h_prev + s,
                                   grad_h + s,
                                   gates + g,
                                   hidden_gates + g,
                                   h_prev + s);
  }
};

template <typename Cell>
__global__ void cell_kernel(int64_t rows, int64_t hidden, Cell cell) {
  const int64_t n = rows * hidden;
  for (int64_t k = grid_index(); k < n; k += grid_stride())
    cell(k / hidden, hidden, k % hidden);
}

// Launches `cell` over the units of `state` ([B, hidden]) on its stream.
template <typename Cell>
void launch(const char* name, const Tensor& state, const Cell& cell) {
  const cudaStream_t stream = prepare(state);
  const int64_t n = state.numel();
  if (n == 0) return;
  cell_kernel<<<blocks_for(n), kThreads, 0, stream>>>(state.size(0), state.size(1), cell);
  TANDEM_CUDA_CHECK_LAUNCH(name);
}

template <typename T>
void lstm_typed(const Tensor& gates,
                const Tensor& c_prev,
                const Tensor& h,
                const Tensor& c) {
  launch("lstm_cell",
         h,
         LstmForward<T>{data_or_null<T>(gates),
                        data_or_null<T>(c_prev),
                        data_or_null<T>(h),
                        data_or_null<T>(c)});
}

template <typename T>
void lstm_backward_typed(const Tensor& grad_gates,
                         const Tensor& grad_c_prev,
                         const Tensor& grad_h,
                         const Tensor& grad_c,
                         const Tensor& gates,
                         const Tensor& c_prev,
                         const Tensor& c) {
  launch("lstm_cell_backward",
         c,
         LstmBackward<T>{data_or_null<T>(grad_gates),
                         data_or_null<T>(grad_c_prev),
                         data_or_null<T>(grad_h),
                         data_or_null<T>(grad_c),
                         data_or_null<T>(gates),
                         data_or_null<T>(c_prev),
                         data_or_null<T>(c)});
}

template <typename T>
void gru_typed(const Tensor& input_gates,
               const Tensor& hidden_gates,
               const Tensor& h_prev,
               const Tensor& h) {
  launch("gru_cell",
         h,
         GruForward<T>{data_or_null<T>(input_gates),
                       data_or_null<T>(hidden_gates),
                       data_or_null<T>(h_prev),
                       data_or_null<T>(h)});
}

template <typename T>
void gru_backward_typed(const Tensor& grad_input_gates,
                        const Tensor& grad_hidden_gates,
                        const Tensor& grad_h_prev,
                        const Tensor& grad_h,
                        const Tensor& gates,
                        const Tensor& hidden_gates,
                        const Tensor& h_prev) {
  launch("gru_cell_backward",
         h_prev,
         GruBackward<T>{data_or_null<T>(grad_input_gates),
                        data_or_null<T>(grad_hidden_gates),
                        data_or_null<T>(grad_h_prev),
                        data_or_null<T>(grad_h),
                        data_or_null<T>(gates),
                        data_or_null<T>(hidden_gates),
                        data_or_null<T>(h_prev)});
}

}  // namespace

void lstm_cell(const Tensor& gates,
               const Tensor& c_prev,
               const Tensor& h,
               const Tensor& c) {
  dispatch_floating(
      h.dtype(), "lstm_cell", [&]<typename T>() { lstm_typed<T>(gates, c_prev, h, c); });
}

void lstm_cell_backward(const Tensor& grad_gates,
                        const Tensor& grad_c_prev,
                        const Tensor& grad_h,
                        const Tensor& grad_c,
                        const Tensor& gates,
                        const Tensor& c_prev,
                        const Tensor& c) {
  dispatch_floating(c.dtype(), "lstm_cell_backward", [&]<typename T>() {
    lstm_backward_typed<T>(grad_gates, grad_c_prev, grad_h, grad_c, gates, c_prev, c);
  });
}

void gru_cell(const Tensor& input_gates,
              const Tensor& hidden_gates,
              const Tensor& h_prev,
              const Tensor& h) {
  dispatch_floating(h.dtype(), "gru_cell", [&]<typename T>() {
    gru_typed<T>(input_gates, hidden_gates, h_prev, h);
  });
}

void gru_cell_backward(const Tensor& grad_input_gates,
                       const Tensor& grad_hidden_gates,
                       const Tensor& grad_h_prev,
                       const Tensor& grad_h,
                       const Tensor& gates,
                       const Tensor& hidden_gates,
                       const Tensor& h_prev) {
  dispatch_floating(h_prev.dtype(), "gru_cell_backward", [&]<typename T>() {
    gru_backward_typed<T>(grad_input_gates,
                          grad_hidden_gates,
                          grad_h_prev,
                          grad_h,
                          gates,
                          hidden_gates,
                          h_prev);
  });
}

}  // namespace tandem::backend::cuda
