// Pointwise activations (relu, gelu, sigmoid, tanh), forward and backward.
// Softmax lives in softmax.cpp and dropout in dropout.cpp.
#include "tandem/ops/activation.h"

#include "tandem/autograd/node.h"
#include "ops/op_utils.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::BinaryOp;
using backend::UnaryOp;

Tensor activation(const char* op, UnaryOp kind, const Tensor& x) {
  detail::check_defined(op, x, "input");
  detail::check_floating(op, x, "input");
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).unary(kind, out, x, 0, 0);
  return out;
}

// grad_in = kind(grad_out, saved), one fused kernel.
Tensor backward_kernel(BinaryOp kind, const Tensor& g, const Tensor& saved) {
  Tensor out = detail::make_empty(g.sizes(), g.dtype(), g.device());
  detail::kernels_for(out).binary(kind, out, g, saved, 0);
  return out;
}

// Records a backward that needs either the input (`save_input`) or the
// result of the forward.
void record(const char* node, BinaryOp kind, const Tensor& x, Tensor& out,
            bool save_input) {
  if (!autograd::any_requires_grad({&x})) return;
  SavedVariable saved(save_input ? x : out);
  autograd::record_function(node, {x}, {&out}, [=](const tensor_list& g) {
    return tensor_list{backward_kernel(kind, g[0].contiguous(), saved.unpack(node))};
  });
}

}  // namespace

Tensor relu(const Tensor& x) {
  Tensor out = activation("relu", UnaryOp::Relu, x);
  // Uses the result: relu(x) > 0 exactly where x > 0.
  record("ReluBackward", BinaryOp::ReluBackward, x, out, /*save_input=*/false);
  return out;
}

Tensor& relu_(Tensor& x) {
  autograd::check_inplace(x, "relu_");
  if (!autograd::any_requires_grad({&x})) {
    detail::check_floating("relu_", x, "input");
    detail::kernels_for(x).unary(UnaryOp::Relu, x, x, 0, 0);
    x.bump_version();
    return x;
  }
  return x.copy_(relu(x));
}

Tensor gelu(const Tensor& x, std::string_view approximate) {
  TANDEM_CHECK(approximate == "none" || approximate == "tanh",
               "gelu: approximate must be 'none' or 'tanh', got '", approximate, "'");
  bool tanh_form = approximate == "tanh";
  Tensor out = activation("gelu", tanh_form ? UnaryOp::GeluTanh : UnaryOp::Gelu, x);
  record("GeluBackward", tanh_form ? BinaryOp::GeluTanhBackward : BinaryOp::GeluBackward,
         x, out, /*save_input=*/true);
  return out;
}

Tensor sigmoid(const Tensor& x) {
  Tensor out = activation("sigmoid", UnaryOp::Sigmoid, x);
  record("SigmoidBackward", BinaryOp::SigmoidBackwardFromResult, x, out, false);
  return out;
}

Tensor tanh(const Tensor& x) {
  Tensor out = activation("tanh", UnaryOp::Tanh, x);
  record("TanhBackward", BinaryOp::TanhBackwardFromResult, x, out, false);
  return out;
}

}  // namespace tandem
