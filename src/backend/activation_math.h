// Private: the scalar formulas of the pointwise activations (backend::
// Activation), one per activation and derivative, compiled for the host by
// the CPU backend and for the GPU by the CUDA backend, which both include
// this header. A backend runs them through its elementwise loop:
//
//   dispatch_activation(kind, [&]<Activation K>() {
//     parallel_elementwise<T, T>(out, ActivationForward<K, T>{a, b}, in);
//   });
//
// The formulas follow PyTorch 1.13's kernels (same branches at the same
// points, so gradients at a kink agree), written in their numerically
// stable forms: softplus and log-sigmoid never exponentiate a positive
// number, so they neither overflow nor lose the small values.
#pragma once

#include <cmath>

#include "backend/dispatch.h"
#include "backend/scalar_math.h"

namespace tandem::backend {
namespace activation_math {

template <typename T>
TANDEM_SCALAR_FN T abs(T x) {
  return x < T(0) ? -x : x;
}

// 1 / (1 + exp(-x)) without exp of a large positive number.
template <typename T>
TANDEM_SCALAR_FN T sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + TANDEM_SCALAR_MATH(exp)(-x));
  const T e = TANDEM_SCALAR_MATH(exp)(x);
  return e / (T(1) + e);
}

// log(1 + exp(x)) = max(x, 0) + log1p(exp(-|x|)).
template <typename T>
TANDEM_SCALAR_FN T softplus(T x) {
  return (x > T(0) ? x : T(0)) +
         TANDEM_SCALAR_MATH(log1p)(TANDEM_SCALAR_MATH(exp)(-abs(x)));
}

/// f(x) for the activation K with parameters a, b (see backend::Activation).
template <Activation K, typename T>
TANDEM_SCALAR_FN T forward(T x, T a, T b) {
  if constexpr (K == Activation::LeakyRelu) {
    return x > T(0) ? x : x * a;
  } else if constexpr (K == Activation::Elu) {
    return x > T(0) ? b * x : b * a * TANDEM_SCALAR_MATH(expm1)(x);
  } else if constexpr (K == Activation::Silu) {
    return x * sigmoid(x);
  } else if constexpr (K == Activation::Mish) {
    return x * TANDEM_SCALAR_MATH(tanh)(softplus(x));
  } else if constexpr (K == Activation::Softplus) {
    // Linear above the threshold, as PyTorch's (a: beta, b: threshold).
    return x * a > b ? x : softplus(x * a) / a;
  } else if constexpr (K == Activation::Hardtanh) {
    // clamp: NaN stays NaN.
    return x < a ? a : (x > b ? b : x);
  } else if constexpr (K == Activation::LogSigmoid) {
    return (x < T(0) ? x : T(0)) -
           TANDEM_SCALAR_MATH(log1p)(TANDEM_SCALAR_MATH(exp)(-abs(x)));
  } else {
    static_assert(K == Activation::Softsign);
    return x / (T(1) + abs(x));
  }
}

/// g * f'(x). Piecewise-constant slopes select g rather than multiply it,
/// so an infinite g gives 0 where the slope is 0 (as PyTorch's).
template <Activation K, typename T>
TANDEM_SCALAR_FN T backward(T g, T x, T a, T b) {
  if constexpr (K == Activation::LeakyRelu) {
    return x > T(0) ? g : g * a;
  } else if constexpr (K == Activation::Elu) {
    return x > T(0) ? g * b : g * b * a * TANDEM_SCALAR_MATH(exp)(x);
  } else if constexpr (K == Activation::Silu) {
    const T s = sigmoid(x);
    return g * s * (T(1) + x * (T(1) - s));
  } else if constexpr (K == Activation::Mish) {
    const T t = TANDEM_SCALAR_MATH(tanh)(softplus(x));
    return g * (t + x * sigmoid(x) * (T(1) - t * t));
  } else if constexpr (K == Activation::Softplus) {
    return x * a > b ? g : g * sigmoid(x * a);
  } else if constexpr (K == Activation::Hardtanh) {
    return x <= a || x >= b ? T(0) : g;
  } else if constexpr (K == Activation::LogSigmoid) {
    return g * sigmoid(-x);
  } else {
    static_assert(K == Activation::Softsign);
    const T d = T(1) + abs(x);
    return g / (d * d);
  }
}

}  // namespace activation_math

/// The elementwise functors a backend's loop calls.
template <Activation K, typename T>
struct ActivationForward {
  T a, b;
  TANDEM_SCALAR_FN T operator()(T x) const {
    return activation_math::forward<K>(x, a, b);
  }
};

template <Activation K, typename T>
struct ActivationBackward {
  T a, b;
  TANDEM_SCALAR_FN T operator()(T g, T x) const {
    return activation_math::backward<K>(g, x, a, b);
  }
};

/// Calls f.template operator()<K>() with K the runtime `kind`, so a kernel
/// switches on the activation once per call, not per element.
template <typename F>
void dispatch_activation(Activation kind, F&& f) {
  switch (kind) {
    case Activation::LeakyRelu:
      return f.template operator()<Activation::LeakyRelu>();
    case Activation::Elu:
      return f.template operator()<Activation::Elu>();
    case Activation::Silu:
      return f.template operator()<Activation::Silu>();
    case Activation::Mish:
      return f.template operator()<Activation::Mish>();
    case Activation::Softplus:
      return f.template operator()<Activation::Softplus>();
    case Activation::Hardtanh:
      return f.template operator()<Activation::Hardtanh>();
    case Activation::LogSigmoid:
      return f.template operator()<Activation::LogSigmoid>();
    case Activation::Softsign:
      return f.template operator()<Activation::Softsign>();
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown activation ", static_cast<int>(kind));
}

}  // namespace tandem::backend

#undef TANDEM_SCALAR_MATH
#undef TANDEM_SCALAR_FN
