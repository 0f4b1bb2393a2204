// CUDA activation kernels: the formulas of backend/activation_math.h (the
// CPU kernels' own) run through the CUDA elementwise loop.
#include "backend/activation_math.h"
#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

// Named templates, not lambdas: nvcc refuses device code in the generic
// lambdas of the dispatch (see loops.cuh).
template <Activation K, typename T>
void forward_typed(
    cudaStream_t stream, const Tensor& out, const Tensor& in, double a, double b) {
  elementwise<T, T>(
      stream, out, ActivationForward<K, T>{static_cast<T>(a), static_cast<T>(b)}, in);
}

template <Activation K, typename T>
void backward_typed(cudaStream_t stream,
                    const Tensor& grad_in,
                    const Tensor& grad_out,
                    const Tensor& in,
                    double a,
                    double b) {
  elementwise<T, T, T>(stream,
                       grad_in,
                       ActivationBackward<K, T>{static_cast<T>(a), static_cast<T>(b)},
                       grad_out,
                       in);
}

}  // namespace

void activation(
    Activation kind, const Tensor& out, const Tensor& in, double a, double b) {
  cudaStream_t stream = prepare(out);
  dispatch_floating(out.dtype(), "activation", [&]<typename T>() {
    dispatch_activation(
        kind, [&]<Activation K>() { forward_typed<K, T>(stream, out, in, a, b); });
  });
}

void activation_backward(Activation kind,
                         const Tensor& grad_in,
                         const Tensor& grad_out,
                         const Tensor& in,
                         double a,
                         double b) {
  cudaStream_t stream = prepare(grad_in);
  dispatch_floating(grad_in.dtype(), "activation_backward", [&]<typename T>() {
    dispatch_activation(kind, [&]<Activation K>() {
      backward_typed<K, T>(stream, grad_in, grad_out, in, a, b);
    });
  });
}

}  // namespace tandem::backend::cuda
