// CPU activation kernels: the formulas of backend/activation_math.h run
// through the elementwise loop (threads split large tensors).
#include "backend/activation_math.h"
#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {

void activation(
    Activation kind, const Tensor& out, const Tensor& in, double a, double b) {
  dispatch_floating(out.dtype(), "activation", [&]<typename T>() {
    dispatch_activation(kind, [&]<Activation K>() {
      const ActivationForward<K, T> f{static_cast<T>(a), static_cast<T>(b)};
      parallel_elementwise<T, T>(out, f, in);
    });
  });
}

void activation_backward(Activation kind,
                         const Tensor& grad_in,
                         const Tensor& grad_out,
                         const Tensor& in,
                         double a,
                         double b) {
  dispatch_floating(grad_in.dtype(), "activation_backward", [&]<typename T>() {
    dispatch_activation(kind, [&]<Activation K>() {
      const ActivationBackward<K, T> f{static_cast<T>(a), static_cast<T>(b)};
      parallel_elementwise<T, T, T>(grad_in, f, grad_out, in);
    });
  });
}

}  // namespace tandem::backend::cpu
