// CUDA elementwise kernels: unary maps, binary maps (arithmetic, comparisons,
// activation backwards) and where. Same ops and dtypes as
// backend/cpu/elementwise.cpp; the math functions are CUDA's (within an ulp
// or two of the host's), and nvcc may fuse a multiply and an add.
#include <limits>
#include <type_traits>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

constexpr double kSqrt1_2 = 0.70710678118654752440;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kGeluTanhC = 0.044715;

// NaN test that does not depend on which isnan overloads the headers give
// device code.
template <typename T>
__device__ __forceinline__ bool is_nan(T x) {
  return x != x;
}

template <typename T>
__device__ __forceinline__ T gelu_erf(T x) {
  return static_cast<T>(0.5) * x * (1 + erf(x * static_cast<T>(kSqrt1_2)));
}

template <typename T>
__device__ __forceinline__ T gelu_tanh(T x) {
  T inner = static_cast<T>(kSqrt2OverPi) * (x + static_cast<T>(kGeluTanhC) * x * x * x);
  return static_cast<T>(0.5) * x * (1 + tanh(inner));
}

template <typename T>
__device__ __forceinline__ T gelu_erf_grad(T x) {
  T cdf = static_cast<T>(0.5) * (1 + erf(x * static_cast<T>(kSqrt1_2)));
  T pdf = static_cast<T>(kInvSqrt2Pi) * exp(static_cast<T>(-0.5) * x * x);
  return cdf + x * pdf;
}

template <typename T>
__device__ __forceinline__ T gelu_tanh_grad(T x) {
  const T c = static_cast<T>(kSqrt2OverPi);
  const T k = static_cast<T>(kGeluTanhC);
  T inner = c * (x + k * x * x * x);
  T th = tanh(inner);
  T dinner = c * (1 + 3 * k * x * x);
  return static_cast<T>(0.5) * (1 + th) +
         static_cast<T>(0.5) * x * (1 - th * th) * dinner;
}

// Integer powers go through double, as on the CPU.
template <typename T>
__device__ __forceinline__ T int_pow(T x, T y) {
  return static_cast<T>(pow(static_cast<double>(x), static_cast<double>(y)));
}

template <typename T>
void unary_typed(
    cudaStream_t stream, UnaryOp op, const Tensor& out, const Tensor& in, T a, T b) {
  auto run = [&](const auto& f) { elementwise<T, T>(stream, out, f, in); };
  switch (op) {
    case UnaryOp::Neg:
      return run([] __device__(T x) -> T { return -x; });
    case UnaryOp::Abs:
      return run([] __device__(T x) -> T {
        if constexpr (std::is_unsigned_v<T>) {
          return x;
        } else {
          return x < 0 ? -x : x;
        }
      });
    case UnaryOp::Sign:
      return run([] __device__(T x) -> T {
        if constexpr (std::is_unsigned_v<T>) {
          return static_cast<T>(x != 0);
        } else {
          return static_cast<T>((T(0) < x) - (x < T(0)));
        }
      });
    case UnaryOp::Square:
      return run([] __device__(T x) -> T { return x * x; });
    case UnaryOp::AddScalar:
      return run([a] __device__(T x) -> T { return x + a; });
    case UnaryOp::MulScalar:
      return run([a] __device__(T x) -> T { return x * a; });
    case UnaryOp::RsubScalar:
      return run([a] __device__(T x) -> T { return a - x; });
    case UnaryOp::Clamp:
      return run([a, b] __device__(T x) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (is_nan(x)) return x;
        }
        // max then min, so min > max gives max everywhere (PyTorch's rule)
        T lifted = x < a ? a : x;
        return lifted > b ? b : lifted;
      });
    case UnaryOp::Relu:
      return run([] __device__(T x) -> T { return x > T(0) ? x : T(0); });
    case UnaryOp::RdivScalar:
      return run([a] __device__(T x) -> T { return a / x; });
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case UnaryOp::Exp:
        return run([] __device__(T x) -> T { return exp(x); });
      case UnaryOp::Log:
        return run([] __device__(T x) -> T { return log(x); });
      case UnaryOp::Sqrt:
        return run([] __device__(T x) -> T { return sqrt(x); });
      case UnaryOp::Sigmoid:
        return run([] __device__(T x) -> T { return T(1) / (T(1) + exp(-x)); });
      case UnaryOp::Tanh:
        return run([] __device__(T x) -> T { return tanh(x); });
      case UnaryOp::Gelu:
        return run([] __device__(T x) -> T { return gelu_erf(x); });
      case UnaryOp::GeluTanh:
        return run([] __device__(T x) -> T { return gelu_tanh(x); });
      case UnaryOp::Reciprocal:
        return run([] __device__(T x) -> T { return T(1) / x; });
      case UnaryOp::PowScalar:
        if (a == T(2)) return run([] __device__(T x) -> T { return x * x; });
        return run([a] __device__(T x) -> T { return pow(x, a); });
      default:
        break;
    }
  } else if (op == UnaryOp::PowScalar) {
    return run([a] __device__(T x) -> T { return int_pow(x, a); });
  }
  TANDEM_INTERNAL_ASSERT(
      false, "unary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
}

template <typename T>
void compare_typed(cudaStream_t stream,
                   BinaryOp op,
                   const Tensor& out,
                   const Tensor& a,
                   const Tensor& b) {
  auto run = [&](const auto& f) { elementwise<bool, T, T>(stream, out, f, a, b); };
  switch (op) {
    case BinaryOp::Eq:
      return run([] __device__(T x, T y) { return x == y; });
    case BinaryOp::Ne:
      return run([] __device__(T x, T y) { return x != y; });
    case BinaryOp::Lt:
      return run([] __device__(T x, T y) { return x < y; });
    case BinaryOp::Le:
      return run([] __device__(T x, T y) { return x <= y; });
    case BinaryOp::Gt:
      return run([] __device__(T x, T y) { return x > y; });
    case BinaryOp::Ge:
      return run([] __device__(T x, T y) { return x >= y; });
    default:
      break;
  }
  TANDEM_INTERNAL_ASSERT(false, "not a comparison: ", static_cast<int>(op));
}

template <typename T>
void binary_typed(cudaStream_t stream,
                  BinaryOp op,
                  const Tensor& out,
                  const Tensor& a,
                  const Tensor& b,
                  T param) {
  auto run = [&](const auto& f) { elementwise<T, T, T>(stream, out, f, a, b); };
  switch (op) {
    case BinaryOp::Add:
      return run([] __device__(T x, T y) -> T { return x + y; });
    case BinaryOp::Sub:
      return run([] __device__(T x, T y) -> T { return x - y; });
    case BinaryOp::Mul:
      return run([] __device__(T x, T y) -> T { return x * y; });
    case BinaryOp::Div:
      return run([] __device__(T x, T y) -> T { return x / y; });
    case BinaryOp::AddScaled:
      return run([param] __device__(T x, T y) -> T { return x + param * y; });
    case BinaryOp::Maximum:
      return run([] __device__(T x, T y) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (is_nan(x) || is_nan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return x > y ? x : y;
      });
    case BinaryOp::Minimum:
      return run([] __device__(T x, T y) -> T {
        if constexpr (std::is_floating_point_v<T>) {
          if (is_nan(x) || is_nan(y)) return std::numeric_limits<T>::quiet_NaN();
        }
        return x < y ? x : y;
      });
    case BinaryOp::ReluBackward:
      return run([] __device__(T g, T x) -> T { return x > T(0) ? g : T(0); });
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (op) {
      case BinaryOp::Pow:
        return run([] __device__(T x, T y) -> T { return pow(x, y); });
      case BinaryOp::SigmoidBackwardFromResult:
        return run([] __device__(T g, T y) -> T { return g * y * (T(1) - y); });
      case BinaryOp::TanhBackwardFromResult:
        return run([] __device__(T g, T y) -> T { return g * (T(1) - y * y); });
      case BinaryOp::GeluBackward:
        return run([] __device__(T g, T x) -> T { return g * gelu_erf_grad(x); });
      case BinaryOp::GeluTanhBackward:
        return run([] __device__(T g, T x) -> T { return g * gelu_tanh_grad(x); });
      default:
        break;
    }
  } else if (op == BinaryOp::Pow) {
    return run([] __device__(T x, T y) -> T { return int_pow(x, y); });
  }
  TANDEM_INTERNAL_ASSERT(
      false, "binary op ", static_cast<int>(op), " has no kernel for ", out.dtype());
}

// Bool arithmetic is logic, as in PyTorch: + and maximum are or, * and
// minimum are and (ops/ refuses the rest).
void bool_binary(cudaStream_t stream,
                 BinaryOp op,
                 const Tensor& out,
                 const Tensor& a,
                 const Tensor& b) {
  auto run = [&](const auto& f) { elementwise<bool, bool, bool>(stream, out, f, a, b); };
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Maximum:
      return run([] __device__(bool x, bool y) { return x || y; });
    case BinaryOp::Mul:
    case BinaryOp::Minimum:
      return run([] __device__(bool x, bool y) { return x && y; });
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

// A scalar parameter in T; bounds such as +-inf saturate, not overflow, for
// integers.
template <typename T>
T narrow(Scalar v) {
  if constexpr (std::is_integral_v<T>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::lowest());
    constexpr double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (!(v > lo)) return std::numeric_limits<T>::lowest();
    if (!(v < hi)) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(v);
}

template <typename T>
void where_typed(cudaStream_t stream,
                 const Tensor& out,
                 const Tensor& cond,
                 const Tensor& a,
                 const Tensor& b) {
  elementwise<T, bool, T, T>(
      stream,
      out,
      [] __device__(bool c, T x, T y) -> T { return c ? x : y; },
      cond,
      a,
      b);
}

}  // namespace

void unary(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b) {
  cudaStream_t stream = prepare(out);
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      TANDEM_INTERNAL_ASSERT(false, "unary kernels do not take bool");
    } else {
      unary_typed<T>(stream, op, out, in, narrow<T>(a), narrow<T>(b));
    }
  });
}

void binary(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar param) {
  cudaStream_t stream = prepare(out);
  if (is_comparison(op)) {
    dispatch_dtype(a.dtype(),
                   [&]<typename T>() { compare_typed<T>(stream, op, out, a, b); });
    return;
  }
  dispatch_dtype(out.dtype(), [&]<typename T>() {
    if constexpr (std::is_same_v<T, bool>) {
      bool_binary(stream, op, out, a, b);
    } else {
      binary_typed<T>(stream, op, out, a, b, static_cast<T>(param));
    }
  });
}

void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  cudaStream_t stream = prepare(out);
  dispatch_dtype(out.dtype(),
                 [&]<typename T>() { where_typed<T>(stream, out, cond, a, b); });
}

}  // namespace tandem::backend::cuda
