// Pointwise activations (relu, gelu, sigmoid, tanh), forward and backward.
// Softmax lives in softmax.cpp and dropout in dropout.cpp.
#include "tandem/ops/activation.h"

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::BinaryOp;
using backend::UnaryOp;

// Runs the forward kernel in `dtype` (the input converted if needed).
Tensor activation(UnaryOp kind, const Tensor& x, ScalarType dtype) {
  Tensor in = x.dtype() == dtype ? x : x.to(dtype);
  Tensor out = detail::make_empty(x.sizes(), dtype, x.device());
  detail::kernels_for(out).unary(kind, out, in, 0, 0);
  return out;
}

// sigmoid and tanh of integers are float32, like exp.
Tensor floating_activation(const char* op, UnaryOp kind, const Tensor& x) {
  detail::check_defined(op, x, "input");
  return activation(kind, x, x.is_floating_point() ? x.dtype() : kFloat32);
}

// relu keeps integer dtypes, as PyTorch's does; bool has no relu.
void check_relu_input(const char* op, const Tensor& x) {
  detail::check_defined(op, x, "input");
  TANDEM_CHECK(x.dtype() != kBool, op, ": not supported for bool tensors");
}

// grad_in = kind(grad_out, saved), one fused kernel.
Tensor backward_kernel(BinaryOp kind, const Tensor& g, const Tensor& saved) {
  Tensor out = detail::make_empty(g.sizes(), g.dtype(), g.device());
  detail::kernels_for(out).binary(kind, out, g, saved, 0);
  return out;
}

// gelu''(x) in recorded ops (so it can be differentiated again).
// Exact: phi(x) (2 - x^2), phi the standard normal density. Tanh form,
// y = x (1 + t) / 2 with t = tanh(u), u = c (x + k x^3):
// (1 - t^2) (u' - x t u'^2 + x u'' / 2).
Tensor gelu_second_derivative(BinaryOp kind, const Tensor& x) {
  constexpr double kInvSqrt2Pi = 0.3989422804014327;
  constexpr double kSqrt2OverPi = 0.7978845608028654;
  constexpr double kCubic = 0.044715;
  if (kind == BinaryOp::GeluBackward) {
    return exp(square(x) * -0.5) * kInvSqrt2Pi * (2 - square(x));
  }
  const Tensor t = tanh((x + pow(x, 3) * kCubic) * kSqrt2OverPi);
  const Tensor du = (1 + square(x) * (3 * kCubic)) * kSqrt2OverPi;
  const Tensor ddu = x * (6 * kCubic * kSqrt2OverPi);
  return (1 - square(t)) * (du - x * t * square(du) + x * ddu * 0.5);
}

// The fused kernels' formulas in recorded ops, for create_graph: the
// gradient can then be differentiated again. For gelu, g * gelu'(x) with
// gelu'(x) from the kernel and its own derivative recorded beside it.
Tensor recorded_backward(BinaryOp kind, const Tensor& g, const Tensor& saved) {
  switch (kind) {
    case BinaryOp::ReluBackward:
      return g * (saved > 0).to(g.dtype());
    case BinaryOp::SigmoidBackwardFromResult:
      return g * saved * (1 - saved);
    case BinaryOp::TanhBackwardFromResult:
      return g * (1 - saved * saved);
    default: {
      Tensor slope = backward_kernel(kind, ones_like(saved), saved);
      autograd::record_function(
          "GeluSlopeBackward",
          {saved},
          {&slope},
          [kind, x = SavedVariable(saved)](const tensor_list& gg) {
            return tensor_list{
                gg[0] * gelu_second_derivative(kind, x.unpack("GeluSlopeBackward"))};
          });
      return g * slope;
    }
  }
}

// Records a backward that needs either the input (`save_input`) or the
// result of the forward.
void record(
    const char* node, BinaryOp kind, const Tensor& x, Tensor& out, bool save_input) {
  if (!autograd::any_requires_grad({&x})) return;
  SavedVariable saved(save_input ? x : out, /*is_output=*/!save_input);
  autograd::record_function(node, {x}, {&out}, [=](const tensor_list& g) {
    Tensor s = saved.unpack(node);
    if (GradMode::is_enabled()) return tensor_list{recorded_backward(kind, g[0], s)};
    return tensor_list{backward_kernel(kind, g[0].contiguous(), s)};
  });
}

}  // namespace

Tensor relu(const Tensor& x) {
  const profiler::Span span = detail::op_span("relu", {&x});
  check_relu_input("relu", x);
  Tensor out = activation(UnaryOp::Relu, x, x.dtype());
  // Uses the result: relu(x) > 0 exactly where x > 0.
  record("ReluBackward", BinaryOp::ReluBackward, x, out, /*save_input=*/false);
  return out;
}

Tensor& relu_(Tensor& x) {
  check_relu_input("relu_", x);
  autograd::check_inplace(x, "relu_");
  if (!autograd::any_requires_grad({&x})) {
    detail::kernels_for(x).unary(UnaryOp::Relu, x, x, 0, 0);
    x.bump_version();
    return x;
  }
  return x.copy_(relu(x));
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  const profiler::Span span = detail::op_span("gelu", {&x});
  TANDEM_CHECK(approximate == "none" || approximate == "tanh",
               "gelu: approximate must be 'none' or 'tanh', got '",
               approximate,
               "'");
  bool tanh_form = approximate == "tanh";
  detail::check_defined("gelu", x, "input");
  detail::check_floating("gelu", x, "input");
  Tensor out = activation(tanh_form ? UnaryOp::GeluTanh : UnaryOp::Gelu, x, x.dtype());
  record("GeluBackward",
         tanh_form ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward,
         x,
         out,
         /*save_input=*/true);
  return out;
}

Tensor sigmoid(const Tensor& x) {
  const profiler::Span span = detail::op_span("sigmoid", {&x});
  Tensor out = floating_activation("sigmoid", UnaryOp::Sigmoid, x);
  record("SigmoidBackward", BinaryOp::SigmoidBackwardFromResult, x, out, false);
  return out;
}

Tensor tanh(const Tensor& x) {
  const profiler::Span span = detail::op_span("tanh", {&x});
  Tensor out = floating_activation("tanh", UnaryOp::Tanh, x);
  record("TanhBackward", BinaryOp::TanhBackwardFromResult, x, out, false);
  return out;
}

}  // namespace tandem
