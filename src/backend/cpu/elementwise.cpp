// CPU elementwise kernels: unary maps, binary maps (arithmetic, comparisons,
// activation backwards) and where.
#include <cmath>
#include <limits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluTanhC = 0.044715;

template <typename T>
T gelu_erf(T x) {
  return static_cast<T>(0.5) * x * (1 + std::erf(x * static_cast<T>(kSqrt1_2)));
}

template <typename T>
T gelu_tanh(T x) {
  T inner = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kGeluTanhC) * x * x * x);
  return static_cast<T>(0.5) * x * (1 + std::tanh(inner));
}

template <typename T>
T gelu_erf_grad(T x) {
  T cdf = static_cast<T>(0.5) * (1 + std::erf(x * static_cast<T>(kSqrt1_2)));
  T pdf = static_cast<T>(kInvSqrt2Pi) * std::exp(static_cast<T>(-0.5) * x * x);
  return cdf + x * pdf;
}

template <typename T>
T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T k = static_cast<T>(kGeluTanhC);
  T inner = c * (x + k * x * x * x);
  T th = std::tanh(inner);
  T dinner = c * (1 + 3 * k * x * x);
  return static_cast<T>(0.5) * (1 + th) +
         static_cast<T>(0.5) * x * (1 - th * th) * dinner;
}

template <typename T>
void unary_typed(UnaryOp op, const Tensor& out, const Tensor& in, T a, T b) {
  auto run = [&](auto f) { parallel_elementwise<T, T>(out, f, in); };
  switch (op) {
    case UnaryOp::Neg:
      return run([](T x) -> T { return -x; });
    case UnaryOp::Abs:
      return run([](T x) -> T { return x < 0 ? -x : x; });
    case UnaryOp::Sign:
      return run([](T x) -> T { return static_cast<T>((T(0) < x) - (x < T(0))); });
    case UnaryOp::Square:
      return run([](T x) -> T { return x * x; });
    case UnaryOp::AddScalar:
      return run([a](T x) -> T { return x + a; });
    case UnaryOp::MulScalar:
      return run([a](T x) -> T { return x * a; });
    case UnaryOp::RsubScalar:
      return run([a](T x) -> T { return a - x; });
    case UnaryOp::Clamp:
      return run([a, b](T x) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(x)) return x;
        }
        // max then min, so min > max gives max everywhere (PyTorch's rule)
        T lifted = x < a ? a : x;
        return lifted > b ? b : lifted;
      });
    case UnaryOp::Relu:
      return run([](T x) -> T { return x > T(0) ? x : T(0); });
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Exp:
        return run([](T x) -> T { return std::exp(x); });
      case UnaryOp::Log:
        return run([](T x) -> T { return std::log(x); });
      case UnaryOp::Sqrt:
        return run([](T x) -> T { return std::sqrt(x); });
      case UnaryOp::Sigmoid:
        return run([](T x) -> T { return T(1) / (T(1) + std::exp(-x)); });
      case UnaryOp::Tanh:
        return run([](T x) -> T { return std::tanh(x); });
      case UnaryOp::Gelu:
        return run([](T x) -> T { return gelu_erf(x); });
      case UnaryOp::GeluTanh:
        return run([](T x) -> T { return gelu_tanh(x); });
      case UnaryOp::Reciprocal:
        return run([](T x) -> T { return T(1) / x; });
      case UnaryOp::RdivScalar:
        return run([a](T x) -> T { return a / x; });
      case UnaryOp::PowScalar:
        // Exact shortcuts (pow(x, 1) is x, and x * x is correctly rounded
        // x^2): MSE's square and its gradient's x^1 skip powf.
        if (a == T(2)) return run([](T x) -> T { return x * x; });
        if (a == T(1)) return run([](T x) -> T { return x; });
        return run([a](T x) -> T { return std::pow(x, a); });
      default:
        break;
    }
  } else {
    switch (op) {
      case UnaryOp::PowScalar:
        return run([a](T x) -> T {
          return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(a)));
        });
      case UnaryOp::RdivScalar:
        return run([a](T x) -> T { return a / x; });
      default:
        break;
    }
  }
  TANDEM_INTERNAL_ASSERT(
      false, "unary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
}

template <typename T>
void compare_typed(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  auto run = [&](auto f) { parallel_elementwise<bool, T, T>(out, f, a, b); };
  switch (op) {
    case BinaryOp::Eq:
      return run([](T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return run([](T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return run([](T x, T y) { return x < y; });
    case BinaryOp::Le:
      return run([](T x, T y) { return x <= y; });
    case BinaryOp::Gt:
      return run([](T x, T y) { return x > y; });
    case BinaryOp::Ge:
      return run([](T x, T y) { return x >= y; });
    default:
      break;
  }
  TANDEM_INTERNAL_ASSERT(false, "not a comparison: ", static_cast<int>(op));
}

template <typename T>
void binary_typed(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, T param) {
  auto run = [&](auto f) { parallel_elementwise<T, T, T>(out, f, a, b); };
  switch (op) {
    case BinaryOp::Add:
      return run([](T x, T y) -> T { return x + y; });
    case BinaryOp::Sub:
      return run([](T x, T y) -> T { return x - y; });
    case BinaryOp::Mul:
      return run([](T x, T y) -> T { return x * y; });
    case BinaryOp::Div:
      return run([](T x, T y) -> T { return x / y; });
    case BinaryOp::AddScaled:
      return run([param](T x, T y) -> T { return x + param * y; });
    case BinaryOp::Maximum:
      return run([](T x, T y) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return x > y ? x : y;
      });
    case BinaryOp::Minimum:
      return run([](T x, T y) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return x < y ? x : y;
      });
    case BinaryOp::ReluBackward:
      return run([](T g, T x) -> T { return x > T(0) ? g : T(0); });
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case BinaryOp::Pow:
        return run([](T x, T y) -> T { return std::pow(x, y); });
      case BinaryOp::SigmoidBackwardFromResult:
        return run([](T g, T y) -> T { return g * y * (T(1) - y); });
      case BinaryOp::TanhBackwardFromResult:
        return run([](T g, T y) -> T { return g * (T(1) - y * y); });
      case BinaryOp::GeluBackward:
        return run([](T g, T x) -> T { return g * gelu_erf_grad(x); });
      case BinaryOp::GeluTanhBackward:
        return run([](T g, T x) -> T { return g * gelu_tanh_grad(x); });
      default:
        break;
    }
  } else if (op == BinaryOp::Pow) {
    return run([](T x, T y) -> T {
      return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    });
  }
  TANDEM_INTERNAL_ASSERT(
      false, "binary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
}

// Bool arithmetic is logic, as in PyTorch: + and maximum are or, * and
// minimum are and (ops/ refuses the rest).
void bool_binary(BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b) {
  auto run = [&](auto f) { parallel_elementwise<bool, bool, bool>(out, f, a, b); };
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Maximum:
      return run([](bool x, bool y) { return x || y; });
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
      return run([](bool x, bool y) { return x && y; });
    default:
      break;
  }
  TANDEM_INTERNAL_ASSERT(
      false, "binary op ", static_cast<int>(op), " has no bool kernel");
}

bool is_comparison(BinaryOp op) {
  return op == BinaryOp::Eq || op == BinaryOp::Ne || op == BinaryOp::Lt ||
         op == BinaryOp::Le || op == BinaryOp::Gt || op == BinaryOp::Ge;
}

}  // namespace

void unary(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      TANDEM_INTERNAL_ASSERT(false, "unary kernels do not take bool");
    } else {
      // Bounds such as +-inf must saturate, not overflow, for integers.
      auto narrow = [](Scalar v) -> T {
        if constexpr (std::is_integral_v<T>) {
          constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
          constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
          if (!(v > lo)) return std::numeric_limits<T>::lowest();
          if (!(v < hi)) return std::numeric_limits<T>::max();
        }
        return static_cast<T>(v);
      };
      unary_typed<T>(op, out, in, narrow(a), narrow(b));
    }
  });
}

void binary(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar param) {
  if (is_comparison(op)) {
    dispatch_dtype(a.dtype(), [&]<typename T>() { compare_typed<T>(op, out, a, b); });
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      bool_binary(op, out, a, b);
    } else {
      binary_typed<T>(op, out, a, b, static_cast<T>(param));
    }
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    parallel_elementwise<T, bool, T, T>(
        out, [](bool c, T x, T y) -> T { return c ? x : y; }, cond, a, b);
  });
}

}  // namespace tandem::backend::cpu
