// In-place ops. Without autograd they run the kernel straight into the
// tensor (the optimizer's hot path); when autograd must follow, they compute
// out of place from a clone of the tensor (the backward may save it, and
// the copy_ below overwrites it) and copy_ the result in, which records the
// history rebase. Either way the version counter is bumped.
#include "ops/op_utils.h"
#include "ops/write_through_view.h"
#include "tandem/graph/node.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

using backend::BinaryOp;
using backend::UnaryOp;

void check_result_fits(const char* op, const Tensor& self, ScalarType result) {
  TANDEM_CHECK(detail::can_cast(result, self.dtype()),
               op,
               ": the result type ",
               result,
               " cannot be stored in place in a ",
               self.dtype(),
               " tensor");
}

template <typename OutOfPlace>
Tensor& inplace_binary(const char* op,
                       Tensor& self,
                       const Tensor& other,
                       BinaryOp kind,
                       Scalar param,
                       OutOfPlace out_of_place) {
  detail::check_defined(op, self, "self");
  detail::check_defined(op, other, "other");
  autograd::check_inplace(self, op);
  detail::check_same_device(op, {&self, &other});
  TANDEM_CHECK(broadcast_shapes(self.sizes(), other.sizes(), op) == self.sizes(),
               op,
               ": the result of shape ",
               broadcast_shapes(self.sizes(), other.sizes(), op),
               " does not fit in place in a tensor of shape ",
               self.sizes());
  ScalarType result = detail::result_type(self, other);
  detail::check_bool_arithmetic(op, kind, result);
  check_result_fits(op, self, result);
  if (autograd::any_requires_grad({&self, &other})) {
    return self.copy_(out_of_place(self.clone()));
  }
  Tensor b = other.dtype() == self.dtype() ? other : other.to(self.dtype());
  detail::kernels_for(self).binary(
      kind, self, self, detail::broadcast_to_raw(b, self.sizes()), param);
  self.bump_version();
  return self;
}

template <typename OutOfPlace>
Tensor& inplace_unary(const char* op,
                      Tensor& self,
                      UnaryOp kind,
                      Scalar a,
                      Scalar b,
                      OutOfPlace out_of_place) {
  detail::check_defined(op, self, "self");
  autograd::check_inplace(self, op);
  if (autograd::any_requires_grad({&self})) return self.copy_(out_of_place(self.clone()));
  detail::kernels_for(self).unary(kind, self, self, a, b);
  self.bump_version();
  return self;
}

// A floating-point function (exp, log, ...) in place: an integral tensor
// cannot hold its float result, as in PyTorch.
template <typename OutOfPlace>
Tensor& inplace_floating(const char* op,
                         Tensor& self,
                         UnaryOp kind,
                         OutOfPlace out_of_place) {
  detail::check_defined(op, self, "self");
  check_result_fits(op, self, self.is_floating_point() ? self.dtype() : kFloat32);
  return inplace_unary(op, self, kind, 0, 0, out_of_place);
}

// A comparison stored in place: computed out of place (bool, no gradient)
// and copied in, converted to self's dtype.
Tensor& inplace_comparison(const char* op, Tensor& self, const Tensor& result) {
  autograd::check_inplace(self, op, /*reads_self=*/false);
  TANDEM_CHECK(result.sizes() == self.sizes(),
               op,
               ": the result of shape ",
               result.sizes(),
               " does not fit in place in a tensor of shape ",
               self.sizes());
  return self.copy_(result);
}

// masked_fill_: the out-of-place result copied in, once it is known to fit.
Tensor& inplace_masked_fill(Tensor& self, const Tensor& mask, const Tensor& filled) {
  TANDEM_CHECK(filled.sizes() == self.sizes(),
               "masked_fill_: the mask of shape ",
               mask.sizes(),
               " does not broadcast to the tensor's shape ",
               self.sizes());
  return self.copy_(filled);
}

}  // namespace

Tensor& Tensor::add_(const Tensor& other, Scalar alpha) {
  return inplace_binary("add_",
                        *this,
                        other,
                        alpha == 1 ? BinaryOp::Add : BinaryOp::AddScaled,
                        alpha,
                        [&](const Tensor& s) { return tandem::add(s, other, alpha); });
}

Tensor& Tensor::sub_(const Tensor& other, Scalar alpha) {
  return inplace_binary("sub_",
                        *this,
                        other,
                        alpha == 1 ? BinaryOp::Sub : BinaryOp::AddScaled,
                        -alpha,
                        [&](const Tensor& s) { return tandem::sub(s, other, alpha); });
}

Tensor& Tensor::mul_(const Tensor& other) {
  return inplace_binary("mul_", *this, other, BinaryOp::Mul, 0, [&](const Tensor& s) {
    return tandem::mul(s, other);
  });
}

Tensor& Tensor::div_(const Tensor& other) {
  TANDEM_CHECK(!defined() || is_floating_point(),
               "div_: true division cannot be ",
               "stored in place in a ",
               dtype(),
               " tensor");
  return inplace_binary("div_", *this, other, BinaryOp::Div, 0, [&](const Tensor& s) {
    return tandem::div(s, other);
  });
}

Tensor& Tensor::add_(Scalar other) {
  check_result_fits("add_", *this, detail::scalar_result_type(*this, other));
  return inplace_unary("add_", *this, UnaryOp::AddScalar, other, 0, [&](const Tensor& s) {
    return tandem::add(s, other);
  });
}

Tensor& Tensor::sub_(Scalar other) { return add_(-other); }

Tensor& Tensor::mul_(Scalar other) {
  check_result_fits("mul_", *this, detail::scalar_result_type(*this, other));
  return inplace_unary("mul_", *this, UnaryOp::MulScalar, other, 0, [&](const Tensor& s) {
    return tandem::mul(s, other);
  });
}

Tensor& Tensor::div_(Scalar other) {
  TANDEM_CHECK(is_floating_point(),
               "div_: true division cannot be stored in ",
               "place in a ",
               dtype(),
               " tensor");
  return div_(scalar_tensor(other, options()));  // true division, as div()
}

Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) {
  TANDEM_CHECK(min || max, "clamp_: at least one of min and max must be given");
  check_result_fits("clamp_", *this, detail::clamp_result_type(*this, min, max));
  return inplace_unary("clamp_",
                       *this,
                       UnaryOp::Clamp,
                       min.value_or(-INFINITY),
                       max.value_or(INFINITY),
                       [&](const Tensor& s) { return tandem::clamp(s, min, max); });
}

Tensor& Tensor::neg_() {
  TANDEM_CHECK(!defined() || dtype() != kBool,
               "neg_: negation of a bool tensor is not supported; use logical_not");
  return inplace_unary(
      "neg_", *this, UnaryOp::Neg, 0, 0, [](const Tensor& s) { return tandem::neg(s); });
}

Tensor& Tensor::abs_() {
  return inplace_unary(
      "abs_", *this, UnaryOp::Abs, 0, 0, [](const Tensor& s) { return tandem::abs(s); });
}

Tensor& Tensor::exp_() {
  return inplace_floating(
      "exp_", *this, UnaryOp::Exp, [](const Tensor& s) { return tandem::exp(s); });
}

Tensor& Tensor::log_() {
  return inplace_floating(
      "log_", *this, UnaryOp::Log, [](const Tensor& s) { return tandem::log(s); });
}

Tensor& Tensor::sqrt_() {
  return inplace_floating(
      "sqrt_", *this, UnaryOp::Sqrt, [](const Tensor& s) { return tandem::sqrt(s); });
}

Tensor& Tensor::sigmoid_() {
  return inplace_floating("sigmoid_", *this, UnaryOp::Sigmoid, [](const Tensor& s) {
    return tandem::sigmoid(s);
  });
}

Tensor& Tensor::tanh_() {
  return inplace_floating(
      "tanh_", *this, UnaryOp::Tanh, [](const Tensor& s) { return tandem::tanh(s); });
}

Tensor& Tensor::pow_(Scalar exponent) {
  check_result_fits("pow_", *this, detail::scalar_result_type(*this, exponent));
  return inplace_unary(
      "pow_", *this, UnaryOp::PowScalar, exponent, 0, [&](const Tensor& s) {
        return tandem::pow(s, exponent);
      });
}

Tensor& Tensor::masked_fill_(const Tensor& mask, Scalar value) {
  autograd::check_inplace(*this, "masked_fill_");
  return inplace_masked_fill(*this, mask, tandem::masked_fill(*this, mask, value));
}

Tensor& Tensor::masked_fill_(const Tensor& mask, const Tensor& value) {
  autograd::check_inplace(*this, "masked_fill_");
  return inplace_masked_fill(*this, mask, tandem::masked_fill(*this, mask, value));
}

Tensor& Tensor::addcmul_(const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  return add_(tandem::mul(tensor1, tensor2), value);
}

Tensor& Tensor::addcdiv_(const Tensor& tensor1, const Tensor& tensor2, Scalar value) {
  return add_(tandem::div(tensor1, tensor2), value);
}

Tensor& Tensor::eq_(const Tensor& o) { return inplace_comparison("eq_", *this, eq(o)); }
Tensor& Tensor::eq_(Scalar o) { return inplace_comparison("eq_", *this, eq(o)); }
Tensor& Tensor::ne_(const Tensor& o) { return inplace_comparison("ne_", *this, ne(o)); }
Tensor& Tensor::ne_(Scalar o) { return inplace_comparison("ne_", *this, ne(o)); }
Tensor& Tensor::lt_(const Tensor& o) { return inplace_comparison("lt_", *this, lt(o)); }
Tensor& Tensor::lt_(Scalar o) { return inplace_comparison("lt_", *this, lt(o)); }
Tensor& Tensor::le_(const Tensor& o) { return inplace_comparison("le_", *this, le(o)); }
Tensor& Tensor::le_(Scalar o) { return inplace_comparison("le_", *this, le(o)); }
Tensor& Tensor::gt_(const Tensor& o) { return inplace_comparison("gt_", *this, gt(o)); }
Tensor& Tensor::gt_(Scalar o) { return inplace_comparison("gt_", *this, gt(o)); }
Tensor& Tensor::ge_(const Tensor& o) { return inplace_comparison("ge_", *this, ge(o)); }
Tensor& Tensor::ge_(Scalar o) { return inplace_comparison("ge_", *this, ge(o)); }

Tensor& Tensor::zero_() { return fill_(0); }

Tensor& Tensor::fill_(Scalar value) {
  detail::check_scalar_fits("fill_", value, dtype());
  autograd::check_inplace(*this, "fill_", /*reads_self=*/false);
  if (detail::write_reaches_graph(*this)) {
    return copy_(full(sizes(), value, options()));
  }
  detail::kernels_for(*this).fill(*this, value);
  bump_version();
  return *this;
}

Tensor& Tensor::uniform_(double from, double to) {
  autograd::check_inplace(*this, "uniform_");
  detail::check_floating("uniform_", *this, "self");
  TANDEM_CHECK(
      from <= to, "uniform_: expected from <= to, got from=", from, " and to=", to);
  detail::kernels_for(*this).uniform(*this, from, to, default_generator());
  bump_version();
  return *this;
}

Tensor& Tensor::normal_(double mean, double std) {
  autograd::check_inplace(*this, "normal_");
  detail::check_floating("normal_", *this, "self");
  TANDEM_CHECK(std >= 0, "normal_: expected std >= 0, got ", std);
  detail::kernels_for(*this).normal(*this, mean, std, default_generator());
  bump_version();
  return *this;
}

Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, Scalar b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, Scalar b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, Scalar b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, Scalar b) { return a.div_(b); }

}  // namespace tandem
