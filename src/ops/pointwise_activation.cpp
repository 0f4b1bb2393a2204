// PyTorch's parametric pointwise activations: leaky_relu, elu, selu, silu,
// mish, softplus, hardtanh, log_sigmoid, softsign (the activation kernels
// of backend/dispatch.h, whose formulas live in backend/activation_math.h),
// and prelu (recorded ops, for its weight's gradient).
//
// Note [Activation second derivatives]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The backward is one fused kernel, grad * f'(x). Under create_graph it is
// grad * slope, with the slope f'(x) from the same kernel and the slope's
// own derivative f''(x) written here in recorded ops (as gelu's), so every
// formula exists once and the gradient can be differentiated again, to any
// order. Piecewise-linear activations (leaky_relu, hardtanh) have f'' = 0
// and record no slope node, as relu.
#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::Activation;

// SELU's constants (Klambauer et al., as PyTorch's).
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

struct Kind {
  Activation activation;
  double a = 0;
  double b = 0;
  const char* node;  // the backward's name
};

Tensor backward_kernel(const Kind& k, const Tensor& g, const Tensor& x) {
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).activation_backward(k.activation, out, g, x, k.a, k.b);
  return out;
}

// f''(x) in recorded ops; empty where f'' is 0 everywhere.
Tensor second_derivative(const Kind& k, const Tensor& x) {
  const double a = k.a, b = k.b;
  switch (k.activation) {
    case Activation::LeakyRelu:
    case Activation::Hardtanh:
      return {};
    case Activation::Elu:
      // exp of at most 0: no inf * 0 on the masked side.
      return exp(clamp_max(x, 0)) * (a * b) * (x <= 0).to(x.dtype());
    case Activation::Silu: {
      const Tensor s = sigmoid(x);
      return s * (1 - s) * (2 + x * (1 - 2 * s));
    }
    case Activation::Mish: {
      const Tensor t = tanh(softplus(x));
      const Tensor s = sigmoid(x);
      return (1 - square(t)) * s * (2 + x * (1 - s) - 2 * x * s * t);
    }
    case Activation::Softplus: {
      const Tensor s = sigmoid(x * a);
      return s * (1 - s) * a * (x * a <= b).to(x.dtype());
    }
    case Activation::LogSigmoid: {
      const Tensor s = sigmoid(x);
      return s * (s - 1);
    }
    case Activation::Softsign:
      return sign(x) * -2 / pow(1 + abs(x), 3);
  }
  TANDEM_INTERNAL_ASSERT(false, "unknown activation");
}

// See Note [Activation second derivatives].
Tensor recorded_backward(const Kind& k, const Tensor& g, const Tensor& x) {
  Tensor slope = backward_kernel(k, ones_like(x), x);
  if (k.activation != Activation::LeakyRelu && k.activation != Activation::Hardtanh) {
    autograd::record_function(
        "ActivationSlopeBackward",
        {x},
        {&slope},
        [k, saved = SavedVariable(x)](const tensor_list& gg) {
          return tensor_list{
              gg[0] * second_derivative(k, saved.unpack("ActivationSlopeBackward"))};
        });
  }
  return g * slope;
}

Tensor apply(const char* op, const Kind& k, const Tensor& x) {
  detail::check_defined(op, x, "input");
  detail::check_floating(op, x, "input");
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  detail::kernels_for(out).activation(k.activation, out, x, k.a, k.b);
  if (!autograd::any_requires_grad({&x})) return out;
  autograd::record_function(
      k.node, {x}, {&out}, [k, saved = SavedVariable(x)](const tensor_list& g) {
        Tensor s = saved.unpack(k.node);
        if (GradMode::is_enabled()) return tensor_list{recorded_backward(k, g[0], s)};
        return tensor_list{backward_kernel(k, g[0].contiguous(), s)};
      });
  return out;
}

// In place: the kernel overwrites x when nothing records; otherwise the
// result is copied in (recorded through copy_, as relu_). The backward
// reads the input, which the copy overwrites, so it saves a clone of it.
Tensor& apply_(const char* op, const Kind& k, Tensor& x) {
  detail::check_defined(op, x, "input");
  detail::check_floating(op, x, "input");
  autograd::check_inplace(x, op);
  if (!autograd::any_requires_grad({&x})) {
    detail::kernels_for(x).activation(k.activation, x, x, k.a, k.b);
    x.bump_version();
    return x;
  }
  return x.copy_(apply(op, k, x.clone()));
}

Kind elu_kind(double alpha) { return {Activation::Elu, alpha, 1.0, "EluBackward"}; }
Kind selu_kind() { return {Activation::Elu, kSeluAlpha, kSeluScale, "SeluBackward"}; }
Kind leaky_relu_kind(double slope) {
  return {Activation::LeakyRelu, slope, 0, "LeakyReluBackward"};
}

Kind hardtanh_kind(const char* op, double min_val, double max_val) {
  TANDEM_CHECK(min_val <= max_val,
               op,
               ": expected min_val <= max_val, got min_val=",
               min_val,
               " and max_val=",
               max_val);
  return {Activation::Hardtanh, min_val, max_val, "HardtanhBackward"};
}

}  // namespace

Tensor leaky_relu(const Tensor& x, double negative_slope) {
  return apply("leaky_relu", leaky_relu_kind(negative_slope), x);
}

Tensor& leaky_relu_(Tensor& x, double negative_slope) {
  return apply_("leaky_relu_", leaky_relu_kind(negative_slope), x);
}

Tensor elu(const Tensor& x, double alpha) { return apply("elu", elu_kind(alpha), x); }

Tensor& elu_(Tensor& x, double alpha) { return apply_("elu_", elu_kind(alpha), x); }

Tensor selu(const Tensor& x) { return apply("selu", selu_kind(), x); }

Tensor& selu_(Tensor& x) { return apply_("selu_", selu_kind(), x); }

Tensor silu(const Tensor& x) {
  return apply("silu", {Activation::Silu, 0, 0, "SiluBackward"}, x);
}

Tensor mish(const Tensor& x) {
  return apply("mish", {Activation::Mish, 0, 0, "MishBackward"}, x);
}

Tensor softplus(const Tensor& x, double beta, double threshold) {
  TANDEM_CHECK(beta != 0, "softplus: beta must be non-zero, got 0");
  return apply(
      "softplus", {Activation::Softplus, beta, threshold, "SoftplusBackward"}, x);
}

Tensor hardtanh(const Tensor& x, double min_val, double max_val) {
  return apply("hardtanh", hardtanh_kind("hardtanh", min_val, max_val), x);
}

Tensor& hardtanh_(Tensor& x, double min_val, double max_val) {
  return apply_("hardtanh_", hardtanh_kind("hardtanh_", min_val, max_val), x);
}

Tensor log_sigmoid(const Tensor& x) {
  return apply("log_sigmoid", {Activation::LogSigmoid, 0, 0, "LogSigmoidBackward"}, x);
}

Tensor softsign(const Tensor& x) {
  return apply("softsign", {Activation::Softsign, 0, 0, "SoftsignBackward"}, x);
}

Tensor prelu(const Tensor& x, const Tensor& weight) {
  detail::check_defined("prelu", x, "input");
  detail::check_defined("prelu", weight, "weight");
  detail::check_same_device("prelu", {&x, &weight});
  detail::check_floating("prelu", x, "input");
  detail::check_same_dtype("prelu", weight, "weight", x, "input");
  TANDEM_CHECK(weight.dim() <= 1,
               "prelu: expected weight of shape [1] or [channels], got ",
               weight.sizes());
  const int64_t n = weight.numel();
  if (n == 1) return where(x > 0, x, weight.reshape({}) * x);
  // The channels are dim 1; an input of fewer dims has one (PyTorch 1.13).
  const int64_t channels = x.dim() >= 2 ? x.sizes()[1] : 1;
  TANDEM_CHECK(n == channels,
               "prelu: weight has ",
               n,
               " parameters but input of shape ",
               x.sizes(),
               " has ",
               channels,
               " channels (dim 1); give one parameter or one per channel");
  IntList shape(static_cast<size_t>(x.dim() - 1), 1);
  shape[0] = n;
  return where(x > 0, x, weight.reshape(shape) * x);
}

}  // namespace tandem
