// Private: the scalar formulas of the elementwise kernels (backend::UnaryOp,
// backend::BinaryOp), one functor per op, compiled for the host by the CPU
// backend and for the GPU by the CUDA backend, which both include this
// header, so the two run the same arithmetic: the same branches, the same
// shortcuts, the same NaN rules. The math functions are each side's own
// (<cmath>'s on the host, CUDA's on the device: within an ulp or two, and
// nvcc may fuse a multiply and an add). The families of fused kernels
// build on it: activation_math.h (the pointwise activations) and
// rnn_cell_math.h (the recurrent cells).
//
// A backend runs an op through its elementwise loop:
//
//   dispatch_unary(op, [&]<UnaryOp K>() {
//     if constexpr (scalar_math::kUnaryTakes<K, T>)
//       elementwise<T, T>(out, scalar_math::Unary<K, T>{a, b}, in);
//   });
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

#include "backend/dispatch.h"

#if defined(__CUDACC__)
#define TANDEM_SCALAR_FN __host__ __device__ __forceinline__
#else
#define TANDEM_SCALAR_FN inline
#endif

// The device pass takes CUDA's global overloads, the host pass <cmath>'s.
#if defined(__CUDA_ARCH__)
#define TANDEM_SCALAR_MATH(fn) ::fn
#else
#define TANDEM_SCALAR_MATH(fn) std::fn
#endif

namespace tandem::backend {
namespace scalar_math {

inline constexpr double kSqrt1_2 = 0.70710678118654752440;
inline constexpr double kSqrt2OverPi = 0.79788456080286535588;
inline constexpr double kInvSqrt2Pi = 0.39894228040143267794;
inline constexpr double kGeluTanhC = 0.044715;

// A NaN test that does not depend on which isnan overloads the headers give
// device code.
template <typename T>
TANDEM_SCALAR_FN bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

template <typename T>
TANDEM_SCALAR_FN T gelu_erf(T x) {
  return static_cast<T>(0.5) * x *
         (1 + TANDEM_SCALAR_MATH(erf)(x * static_cast<T>(kSqrt1_2)));
}

template <typename T>
TANDEM_SCALAR_FN T gelu_tanh(T x) {
  const T inner =
      static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kGeluTanhC) * x * x * x);
  return static_cast<T>(0.5) * x * (1 + TANDEM_SCALAR_MATH(tanh)(inner));
}

template <typename T>
TANDEM_SCALAR_FN T gelu_erf_grad(T x) {
  const T cdf =
      static_cast<T>(0.5) * (1 + TANDEM_SCALAR_MATH(erf)(x * static_cast<T>(kSqrt1_2)));
  const T pdf =
      static_cast<T>(kInvSqrt2Pi) * TANDEM_SCALAR_MATH(exp)(static_cast<T>(-0.5) * x * x);
  return cdf + x * pdf;
}

template <typename T>
TANDEM_SCALAR_FN T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T k = static_cast<T>(kGeluTanhC);
  const T inner = c * (x + k * x * x * x);
  const T th = TANDEM_SCALAR_MATH(tanh)(inner);
  const T dinner = c * (1 + 3 * k * x * x);
  return static_cast<T>(0.5) * (1 + th) +
         static_cast<T>(0.5) * x * (1 - th * th) * dinner;
}

// x^y; integer powers go through double.
template <typename T>
TANDEM_SCALAR_FN T power(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    return TANDEM_SCALAR_MATH(pow)(x, y);
  } else {
    return static_cast<T>(
        TANDEM_SCALAR_MATH(pow)(static_cast<double>(x), static_cast<double>(y)));
  }
}

/// Whether unary op K has a kernel for T: the transcendental ops and the
/// reciprocal take floating types only; nothing takes bool.
template <UnaryOp K, typename T>
inline constexpr bool kUnaryTakes =
    !std::is_same_v<T, bool> &&
    (std::is_floating_point_v<T> ||
     !(K == UnaryOp::Exp || K == UnaryOp::Log || K == UnaryOp::Sqrt ||
       K == UnaryOp::Sigmoid || K == UnaryOp::Tanh || K == UnaryOp::Gelu ||
       K == UnaryOp::GeluTanh || K == UnaryOp::Reciprocal));

/// y = f(x) for unary op K, with the op's scalars a, b (dispatch.h).
template <UnaryOp K, typename T>
struct Unary {
  T a, b;

  TANDEM_SCALAR_FN T operator()(T x) const {
    if constexpr (K == UnaryOp::Neg) {
      return -x;
    } else if constexpr (K == UnaryOp::Abs) {
      if constexpr (std::is_unsigned_v<T>) {
        return x;
      } else {
        return x < T(0) ? -x : x;
      }
    } else if constexpr (K == UnaryOp::Sign) {
      if constexpr (std::is_unsigned_v<T>) {
        return static_cast<T>(x != T(0));
      } else {
        return static_cast<T>((T(0) < x) - (x < T(0)));
      }
    } else if constexpr (K == UnaryOp::Square) {
      return x * x;
    } else if constexpr (K == UnaryOp::AddScalar) {
      return x + a;
    } else if constexpr (K == UnaryOp::MulScalar) {
      return x * a;
    } else if constexpr (K == UnaryOp::RsubScalar) {
      return a - x;
    } else if constexpr (K == UnaryOp::RdivScalar) {
      return a / x;
    } else if constexpr (K == UnaryOp::Clamp) {
      if (is_nan(x)) return x;
      // max then min, so min > max gives max everywhere (PyTorch's rule)
      const T lifted = x < a ? a : x;
      return lifted > b ? b : lifted;
    } else if constexpr (K == UnaryOp::Relu) {
      return x > T(0) ? x : T(0);
    } else if constexpr (K == UnaryOp::PowScalar) {
      // Exact shortcuts (x * x is correctly rounded x^2, x^1 is x): MSE's
      // square and its gradient's x^1 skip pow.
      if constexpr (std::is_floating_point_v<T>) {
        if (a == T(2)) return x * x;
        if (a == T(1)) return x;
      }
      return power(x, a);
    } else if constexpr (K == UnaryOp::Exp) {
      return TANDEM_SCALAR_MATH(exp)(x);
    } else if constexpr (K == UnaryOp::Log) {
      return TANDEM_SCALAR_MATH(log)(x);
    } else if constexpr (K == UnaryOp::Sqrt) {
      return TANDEM_SCALAR_MATH(sqrt)(x);
    } else if constexpr (K == UnaryOp::Sigmoid) {
      return T(1) / (T(1) + TANDEM_SCALAR_MATH(exp)(-x));
    } else if constexpr (K == UnaryOp::Tanh) {
      return TANDEM_SCALAR_MATH(tanh)(x);
    } else if constexpr (K == UnaryOp::Gelu) {
      return gelu_erf(x);
    } else if constexpr (K == UnaryOp::GeluTanh) {
      return gelu_tanh(x);
    } else {
      static_assert(K == UnaryOp::Reciprocal);
      return T(1) / x;
    }
  }
};

/// Calls f.template operator()<K>() for the op's value K.
template <typename F>
void dispatch_unary(UnaryOp op, F&& f) {
  switch (op) {
#define TANDEM_UNARY_CASE(name) \
  case UnaryOp::name:           \
    return f.template operator()<UnaryOp::name>();
    TANDEM_UNARY_CASE(Neg)
    TANDEM_UNARY_CASE(Exp)
    TANDEM_UNARY_CASE(Log)
    TANDEM_UNARY_CASE(Sqrt)
    TANDEM_UNARY_CASE(Abs)
    TANDEM_UNARY_CASE(Relu)
    TANDEM_UNARY_CASE(Sigmoid)
    TANDEM_UNARY_CASE(Tanh)
    TANDEM_UNARY_CASE(Gelu)
    TANDEM_UNARY_CASE(GeluTanh)
    TANDEM_UNARY_CASE(Sign)
    TANDEM_UNARY_CASE(Reciprocal)
    TANDEM_UNARY_CASE(Square)
    TANDEM_UNARY_CASE(PowScalar)
    TANDEM_UNARY_CASE(Clamp)
    TANDEM_UNARY_CASE(AddScalar)
    TANDEM_UNARY_CASE(MulScalar)
    TANDEM_UNARY_CASE(RsubScalar)
    TANDEM_UNARY_CASE(RdivScalar)
#undef TANDEM_UNARY_CASE
  }
}

/// Whether binary op K is a comparison (bool out, inputs of any dtype).
template <BinaryOp K>
inline constexpr bool kIsComparison =
    K == BinaryOp::Eq || K == BinaryOp::Ne || K == BinaryOp::Lt || K == BinaryOp::Le ||
    K == BinaryOp::Gt || K == BinaryOp::Ge;

/// Whether arithmetic binary op K has a kernel for T (bool has its own,
/// BoolBinary; the activations' backwards take floating types only).
template <BinaryOp K, typename T>
inline constexpr bool kBinaryTakes =
    !std::is_same_v<T, bool> && !kIsComparison<K> &&
    (std::is_floating_point_v<T> ||
     !(K == BinaryOp::SigmoidBackwardFromResult ||
       K == BinaryOp::TanhBackwardFromResult || K == BinaryOp::GeluBackward ||
       K == BinaryOp::GeluTanhBackward));

/// out = f(x, y) for arithmetic binary op K; `param` is AddScaled's alpha.
/// The backwards take (grad, input) or (grad, result) as their names say.
template <BinaryOp K, typename T>
struct Binary {
  T param;

  TANDEM_SCALAR_FN T operator()(T x, T y) const {
    if constexpr (K == BinaryOp::Add) {
      return x + y;
    } else if constexpr (K == BinaryOp::Sub) {
      return x - y;
    } else if constexpr (K == BinaryOp::Mul) {
      return x * y;
    } else if constexpr (K == BinaryOp::Div) {
      return x / y;
    } else if constexpr (K == BinaryOp::AddScaled) {
      return x + param * y;
    } else if constexpr (K == BinaryOp::Pow) {
      return power(x, y);
    } else if constexpr (K == BinaryOp::Maximum) {
      if (is_nan(x) || is_nan(y)) return std::numeric_limits<T>::quiet_NaN();
      return x > y ? x : y;
    } else if constexpr (K == BinaryOp::Minimum) {
      if (is_nan(x) || is_nan(y)) return std::numeric_limits<T>::quiet_NaN();
      return x < y ? x : y;
    } else if constexpr (K == BinaryOp::ReluBackward) {
      return y > T(0) ? x : T(0);
    } else if constexpr (K == BinaryOp::SigmoidBackwardFromResult) {
      return x * y * (T(1) - y);
    } else if constexpr (K == BinaryOp::TanhBackwardFromResult) {
      return x * (T(1) - y * y);
    } else if constexpr (K == BinaryOp::GeluBackward) {
      return x * gelu_erf_grad(y);
    } else {
      static_assert(K == BinaryOp::GeluTanhBackward);
      return x * gelu_tanh_grad(y);
    }
  }
};

/// out = x op y for comparison K.
template <BinaryOp K, typename T>
struct Compare {
  TANDEM_SCALAR_FN bool operator()(T x, T y) const {
    if constexpr (K == BinaryOp::Eq) {
      return x == y;
    } else if constexpr (K == BinaryOp::Ne) {
      return x != y;
    } else if constexpr (K == BinaryOp::Lt) {
      return x < y;
    } else if constexpr (K == BinaryOp::Le) {
      return x <= y;
    } else if constexpr (K == BinaryOp::Gt) {
      return x > y;
    } else {
      static_assert(K == BinaryOp::Ge);
      return x >= y;
    }
  }
};

/// Bool arithmetic is logic, as in PyTorch: + and maximum are or, * and
/// minimum are and (ops/ refuses the rest).
template <BinaryOp K>
inline constexpr bool kBoolBinaryTakes = K == BinaryOp::Add || K == BinaryOp::Maximum ||
                                         K == BinaryOp::Mul || K == BinaryOp::Minimum;

template <BinaryOp K>
struct BoolBinary {
  TANDEM_SCALAR_FN bool operator()(bool x, bool y) const {
    if constexpr (K == BinaryOp::Add || K == BinaryOp::Maximum) {
      return x || y;
    } else {
      return x && y;
    }
  }
};

/// Calls f.template operator()<K>() for the op's value K.
template <typename F>
void dispatch_binary(BinaryOp op, F&& f) {
  switch (op) {
#define TANDEM_BINARY_CASE(name) \
  case BinaryOp::name:           \
    return f.template operator()<BinaryOp::name>();
    TANDEM_BINARY_CASE(Add)
    TANDEM_BINARY_CASE(Sub)
    TANDEM_BINARY_CASE(Mul)
    TANDEM_BINARY_CASE(Div)
    TANDEM_BINARY_CASE(Pow)
    TANDEM_BINARY_CASE(Maximum)
    TANDEM_BINARY_CASE(Minimum)
    TANDEM_BINARY_CASE(AddScaled)
    TANDEM_BINARY_CASE(Eq)
    TANDEM_BINARY_CASE(Ne)
    TANDEM_BINARY_CASE(Lt)
    TANDEM_BINARY_CASE(Le)
    TANDEM_BINARY_CASE(Gt)
    TANDEM_BINARY_CASE(Ge)
    TANDEM_BINARY_CASE(ReluBackward)
    TANDEM_BINARY_CASE(SigmoidBackwardFromResult)
    TANDEM_BINARY_CASE(TanhBackwardFromResult)
    TANDEM_BINARY_CASE(GeluBackward)
    TANDEM_BINARY_CASE(GeluTanhBackward)
#undef TANDEM_BINARY_CASE
  }
}

/// An op's scalar in T; bounds such as +-inf saturate, not overflow, for
/// integers.
template <typename T>
T narrow_scalar(double v) {
  if constexpr (std::is_integral_v<T>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (!(v > lo)) return std::numeric_limits<T>::lowest();
    if (!(v < hi)) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

}  // namespace scalar_math
}  // namespace tandem::backend
