// Elementwise arithmetic and comparisons, forward and backward together.
#include "tandem/ops/elementwise.h"

#include <cmath>

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;
using backend::BinaryOp;
using backend::UnaryOp;

// A gradient for an input of `sizes` and `dtype` from one of the output's
// shape: undo broadcasting, then undo promotion.
Tensor reduce_grad(const Tensor& g, const IntList& sizes, ScalarType dtype) {
  Tensor r = sum_to(g, sizes);
  return r.dtype() == dtype ? r : r.to(dtype);
}

// Runs a binary kernel: checks devices, promotes dtypes, broadcasts.
Tensor binary_kernel(const char* op,
                     BinaryOp kind,
                     const Tensor& a,
                     const Tensor& b,
                     Scalar param = 0,
                     bool comparison = false) {
  const profiler::Span span = detail::op_span(op, {&a, &b});
  detail::check_defined(op, a, "self");
  detail::check_defined(op, b, "other");
  detail::check_same_device(op, {&a, &b});
  IntList shape = broadcast_shapes(a.sizes(), b.sizes(), op);
  ScalarType common = detail::result_type(a, b);
  if (!comparison) detail::check_bool_arithmetic(op, kind, common);
  Tensor ca = a.dtype() == common ? a : a.detach().to(common);
  Tensor cb = b.dtype() == common ? b : b.detach().to(common);
  Tensor out = detail::make_empty(shape, comparison ? kBool : common, a.device());
  detail::kernels_for(out).binary(kind,
                                  out,
                                  detail::broadcast_to_raw(ca, shape),
                                  detail::broadcast_to_raw(cb, shape),
                                  param);
  return out;
}

Tensor unary_kernel(const char* op,
                    UnaryOp kind,
                    const Tensor& x,
                    ScalarType out_dtype,
                    Scalar a = 0,
                    Scalar b = 0) {
  const profiler::Span span = detail::op_span(op, {&x});
  detail::check_defined(op, x, "self");
  Tensor in = x.dtype() == out_dtype ? x : x.detach().to(out_dtype);
  Tensor out = detail::make_empty(x.sizes(), out_dtype, x.device());
  detail::kernels_for(out).unary(kind, out, in, a, b);
  return out;
}

Tensor floating_unary(const char* op, UnaryOp kind, const Tensor& x) {
  detail::check_defined(op, x, "self");
  ScalarType dtype = x.is_floating_point() ? x.dtype() : kFloat32;
  return unary_kernel(op, kind, x, dtype);
}

Tensor comparison(const char* op, BinaryOp kind, const Tensor& a, const Tensor& b) {
  return binary_kernel(op, kind, a, b, 0, /*comparison=*/true);
}

Tensor comparison(const char* op, BinaryOp kind, const Tensor& a, Scalar b) {
  detail::check_defined(op, a, "self");
  // Compare in the tensor's dtype unless that would round or overflow the
  // scalar.
  ScalarType dtype = a.dtype() == kBool ? kInt64 : a.dtype();
  if (b != std::floor(b) || !detail::scalar_fits(b, dtype)) dtype = kFloat64;
  if (a.is_floating_point()) dtype = a.dtype();
  return comparison(
      op, kind, a, scalar_tensor(b, TensorOptions(dtype).device(a.device())));
}

}  // namespace

IntList broadcast_shapes(const IntList& a, const IntList& b, const char* op) {
  const size_t n = std::max(a.size(), b.size());
  IntList out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    TANDEM_CHECK(da == db || da == 1 || db == 1,
                 op,
                 ": shapes ",
                 a,
                 " and ",
                 b,
                 " cannot be broadcast together (dim ",
                 i,
                 ": ",
                 da,
                 " vs ",
                 db,
                 ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

Tensor sum_to(const Tensor& t, const IntList& sizes) {
  if (t.sizes() == sizes) return t;
  const int64_t lead = t.dim() - static_cast<int64_t>(sizes.size());
  TANDEM_INTERNAL_ASSERT(lead >= 0, "sum_to: cannot reduce ", t.sizes(), " to ", sizes);
  IntList dims;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d < lead || (sizes[d - lead] == 1 && t.sizes()[d] != 1)) dims.push_back(d);
  }
  Tensor r = dims.empty() ? t : sum(t, dims, /*keepdim=*/true);
  return r.dim() == static_cast<int64_t>(sizes.size()) ? r : r.reshape(sizes);
}

// ---- arithmetic ----

Tensor add(const Tensor& a, const Tensor& b, Scalar alpha) {
  Tensor out = alpha == 1 ? binary_kernel("add", BinaryOp::Add, a, b)
                          : binary_kernel("add", BinaryOp::AddScaled, a, b, alpha);
  IntList sa = a.sizes(), sb = b.sizes();
  ScalarType ta = a.dtype(), tb = b.dtype();
  autograd::record_function("AddBackward", {a, b}, {&out}, [=](const tensor_list& g) {
    return tensor_list{reduce_grad(g[0], sa, ta),
                       reduce_grad(alpha == 1 ? g[0] : g[0] * alpha, sb, tb)};
  });
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b, Scalar alpha) {
  Tensor out = binary_kernel(
      "sub", alpha == 1 ? BinaryOp::Sub : BinaryOp::AddScaled, a, b, -alpha);
  IntList sa = a.sizes(), sb = b.sizes();
  ScalarType ta = a.dtype(), tb = b.dtype();
  autograd::record_function("SubBackward", {a, b}, {&out}, [=](const tensor_list& g) {
    return tensor_list{reduce_grad(g[0], sa, ta), reduce_grad(g[0] * -alpha, sb, tb)};
  });
  return out;
}

Tensor add(const Tensor& a, Scalar b, Scalar alpha) {
  Tensor out = unary_kernel(
      "add", UnaryOp::AddScalar, a, detail::scalar_result_type(a, b * alpha), b * alpha);
  ScalarType ta = a.dtype();
  autograd::record_function("AddBackward", {a}, {&out}, [ta](const tensor_list& g) {
    return tensor_list{g[0].dtype() == ta ? g[0] : g[0].to(ta)};
  });
  return out;
}

Tensor sub(const Tensor& a, Scalar b, Scalar alpha) { return add(a, -b, alpha); }

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel("mul", BinaryOp::Mul, a, b);
  if (autograd::any_requires_grad({&a, &b})) {
    IntList sa = a.sizes(), sb = b.sizes();
    ScalarType ta = a.dtype(), tb = b.dtype();
    bool need_a = a.requires_grad(), need_b = b.requires_grad();
    SavedVariable va(need_b ? a : Tensor()), vb(need_a ? b : Tensor());
    autograd::record_function("MulBackward", {a, b}, {&out}, [=](const tensor_list& g) {
      Tensor ga =
          need_a ? reduce_grad(g[0] * vb.unpack("MulBackward"), sa, ta) : Tensor();
      Tensor gb =
          need_b ? reduce_grad(g[0] * va.unpack("MulBackward"), sb, tb) : Tensor();
      return tensor_list{ga, gb};
    });
  }
  return out;
}

Tensor mul(const Tensor& a, Scalar b) {
  Tensor out =
      unary_kernel("mul", UnaryOp::MulScalar, a, detail::scalar_result_type(a, b), b);
  ScalarType ta = a.dtype();
  autograd::record_function("MulBackward", {a}, {&out}, [=](const tensor_list& g) {
    Tensor r = g[0] * b;
    return tensor_list{r.dtype() == ta ? r : r.to(ta)};
  });
  return out;
}

Tensor div(const Tensor& a, const Tensor& b) {
  // True division: integers divide as float32, like PyTorch.
  if (is_integral(a.dtype()) && is_integral(b.dtype())) {
    return div(a.to(kFloat32), b.to(kFloat32));
  }
  Tensor out = binary_kernel("div", BinaryOp::Div, a, b);
  if (autograd::any_requires_grad({&a, &b})) {
    IntList sa = a.sizes(), sb = b.sizes();
    ScalarType ta = a.dtype(), tb = b.dtype();
    bool need_b = b.requires_grad();
    SavedVariable va(need_b ? a : Tensor()), vb(b);
    autograd::record_function("DivBackward", {a, b}, {&out}, [=](const tensor_list& g) {
      Tensor bv = vb.unpack("DivBackward");
      Tensor ga = reduce_grad(g[0] / bv, sa, ta);
      Tensor gb = need_b
                      ? reduce_grad(-g[0] * va.unpack("DivBackward") / (bv * bv), sb, tb)
                      : Tensor();
      return tensor_list{ga, gb};
    });
  }
  return out;
}

Tensor div(const Tensor& a, Scalar b) {
  detail::check_defined("div", a, "self");
  if (is_integral(a.dtype())) return div(a.to(kFloat32), b);
  // A true division, not a product with 1/b, so x / 49 rounds like PyTorch.
  return div(a, scalar_tensor(b, a.options()));
}

Tensor pow(const Tensor& base, const Tensor& exponent) {
  Tensor out = binary_kernel("pow", BinaryOp::Pow, base, exponent);
  if (autograd::any_requires_grad({&base, &exponent})) {
    IntList sa = base.sizes(), sb = exponent.sizes();
    ScalarType ta = base.dtype(), tb = exponent.dtype();
    SavedVariable vb(base), ve(exponent), vo(out, /*is_output=*/true);
    autograd::record_function(
        "PowBackward", {base, exponent}, {&out}, [=](const tensor_list& g) {
          Tensor b = vb.unpack("PowBackward"), e = ve.unpack("PowBackward");
          // e * b^(e-1) is 0 * inf at b == 0, e == 0; PyTorch takes it as 0.
          Tensor db = where(e == 0, zeros_like(g[0]), e * pow(b, e - 1));
          Tensor ga = reduce_grad(g[0] * db, sa, ta);
          // d/de b^e = b^e log b, taken as 0 where b == 0 (PyTorch's convention).
          Tensor lg = where(b == 0, zeros_like(b), log(b));
          Tensor gb = reduce_grad(g[0] * vo.unpack("PowBackward") * lg, sb, tb);
          return tensor_list{ga, gb};
        });
  }
  return out;
}

Tensor pow(const Tensor& base, Scalar exponent) {
  ScalarType dtype = detail::scalar_result_type(base, exponent);
  Tensor out = unary_kernel("pow", UnaryOp::PowScalar, base, dtype, exponent);
  if (autograd::any_requires_grad({&base})) {
    SavedVariable vb(base);
    autograd::record_function("PowBackward", {base}, {&out}, [=](const tensor_list& g) {
      if (exponent == 0) return tensor_list{zeros_like(g[0])};
      Tensor b = vb.unpack("PowBackward");
      return tensor_list{g[0] * exponent * pow(b, exponent - 1)};
    });
  }
  return out;
}

Tensor pow(Scalar base, const Tensor& exponent) {
  detail::check_defined("pow", exponent, "exponent");
  // Like `exponent op base`: integers stay integers for a whole base.
  return pow(full_like(exponent, base, detail::scalar_result_type(exponent, base)),
             exponent);
}

namespace {

Tensor extremum(
    const char* op, const char* node, BinaryOp kind, const Tensor& a, const Tensor& b) {
  Tensor out = binary_kernel(op, kind, a, b);
  if (autograd::any_requires_grad({&a, &b})) {
    IntList sa = a.sizes(), sb = b.sizes();
    ScalarType ta = a.dtype(), tb = b.dtype();
    SavedVariable va(a), vb(b);
    bool is_max = kind == BinaryOp::Maximum;
    autograd::record_function(node, {a, b}, {&out}, [=](const tensor_list& g) {
      Tensor x = va.unpack(node), y = vb.unpack(node);
      // Ties share the gradient equally, as in PyTorch.
      Tensor wins_a = is_max ? gt(x, y) : lt(x, y);
      Tensor ties = eq(x, y);
      Tensor zero = zeros_like(g[0]);
      Tensor half = g[0] * 0.5;
      Tensor ga = where(wins_a, g[0], where(ties, half, zero));
      Tensor gb = where(wins_a, zero, where(ties, half, g[0]));
      return tensor_list{reduce_grad(ga, sa, ta), reduce_grad(gb, sb, tb)};
    });
  }
  return out;
}

}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) {
  return extremum("maximum", "MaximumBackward", BinaryOp::Maximum, a, b);
}

Tensor minimum(const Tensor& a, const Tensor& b) {
  return extremum("minimum", "MinimumBackward", BinaryOp::Minimum, a, b);
}

// ---- unary math ----

Tensor neg(const Tensor& x) {
  TANDEM_CHECK(!x.defined() || x.dtype() != kBool,
               "neg: negation of a bool tensor is not supported; use logical not");
  Tensor out = unary_kernel("neg", UnaryOp::Neg, x, x.dtype());
  autograd::record_function("NegBackward", {x}, {&out}, [](const tensor_list& g) {
    return tensor_list{-g[0]};
  });
  return out;
}

Tensor exp(const Tensor& x) {
  Tensor out = floating_unary("exp", UnaryOp::Exp, x);
  SavedVariable vo(autograd::any_requires_grad({&x}) ? out : Tensor(),
                   /*is_output=*/true);
  autograd::record_function("ExpBackward", {x}, {&out}, [vo](const tensor_list& g) {
    return tensor_list{g[0] * vo.unpack("ExpBackward")};
  });
  return out;
}

Tensor log(const Tensor& x) {
  Tensor out = floating_unary("log", UnaryOp::Log, x);
  SavedVariable vx(autograd::any_requires_grad({&x}) ? x : Tensor());
  autograd::record_function("LogBackward", {x}, {&out}, [vx](const tensor_list& g) {
    return tensor_list{g[0] / vx.unpack("LogBackward")};
  });
  return out;
}

Tensor sqrt(const Tensor& x) {
  Tensor out = floating_unary("sqrt", UnaryOp::Sqrt, x);
  SavedVariable vo(autograd::any_requires_grad({&x}) ? out : Tensor(),
                   /*is_output=*/true);
  autograd::record_function("SqrtBackward", {x}, {&out}, [vo](const tensor_list& g) {
    return tensor_list{g[0] / (vo.unpack("SqrtBackward") * 2)};
  });
  return out;
}

Tensor rsqrt(const Tensor& x) { return reciprocal(sqrt(x)); }

Tensor abs(const Tensor& x) {
  Tensor out =
      unary_kernel("abs", UnaryOp::Abs, x, x.dtype() == kBool ? kUInt8 : x.dtype());
  SavedVariable vx(autograd::any_requires_grad({&x}) ? x : Tensor());
  autograd::record_function("AbsBackward", {x}, {&out}, [vx](const tensor_list& g) {
    return tensor_list{g[0] * sign(vx.unpack("AbsBackward"))};
  });
  return out;
}

Tensor sign(const Tensor& x) {
  Tensor out =
      unary_kernel("sign", UnaryOp::Sign, x, x.dtype() == kBool ? kUInt8 : x.dtype());
  autograd::record_function("SignBackward", {x}, {&out}, [](const tensor_list& g) {
    return tensor_list{zeros_like(g[0])};
  });
  return out;
}

Tensor square(const Tensor& x) { return pow(x, 2); }

Tensor reciprocal(const Tensor& x) {
  Tensor out = floating_unary("reciprocal", UnaryOp::Reciprocal, x);
  SavedVariable vo(autograd::any_requires_grad({&x}) ? out : Tensor(),
                   /*is_output=*/true);
  autograd::record_function(
      "ReciprocalBackward", {x}, {&out}, [vo](const tensor_list& g) {
        Tensor o = vo.unpack("ReciprocalBackward");
        return tensor_list{-g[0] * o * o};
      });
  return out;
}

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  TANDEM_CHECK(min || max, "clamp: at least one of min and max must be given");
  detail::check_defined("clamp", x, "self");
  const double lo = min.value_or(-INFINITY), hi = max.value_or(INFINITY);
  Tensor out = unary_kernel(
      "clamp", UnaryOp::Clamp, x, detail::clamp_result_type(x, min, max), lo, hi);
  SavedVariable vx(autograd::any_requires_grad({&x}) ? x : Tensor());
  autograd::record_function("ClampBackward", {x}, {&out}, [=](const tensor_list& g) {
    Tensor v = vx.unpack("ClampBackward");
    Tensor zero = zeros_like(g[0]);
    Tensor r = g[0];
    if (min) r = where(ge(v, lo), r, zero);
    if (max) r = where(le(v, hi), r, zero);
    return tensor_list{r};
  });
  return out;
}

Tensor clamp_min(const Tensor& x, Scalar min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, Scalar max) { return clamp(x, std::nullopt, max); }

// ---- comparisons ----

Tensor eq(const Tensor& a, const Tensor& b) {
  return comparison("eq", BinaryOp::Eq, a, b);
}
Tensor eq(const Tensor& a, Scalar b) { return comparison("eq", BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) {
  return comparison("ne", BinaryOp::Ne, a, b);
}
Tensor ne(const Tensor& a, Scalar b) { return comparison("ne", BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) {
  return comparison("lt", BinaryOp::Lt, a, b);
}
Tensor lt(const Tensor& a, Scalar b) { return comparison("lt", BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) {
  return comparison("le", BinaryOp::Le, a, b);
}
Tensor le(const Tensor& a, Scalar b) { return comparison("le", BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) {
  return comparison("gt", BinaryOp::Gt, a, b);
}
Tensor gt(const Tensor& a, Scalar b) { return comparison("gt", BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) {
  return comparison("ge", BinaryOp::Ge, a, b);
}
Tensor ge(const Tensor& a, Scalar b) { return comparison("ge", BinaryOp::Ge, a, b); }

bool equal(const Tensor& a, const Tensor& b) {
  detail::check_same_device("equal", {&a, &b});
  if (a.sizes() != b.sizes()) return false;
  NoGradGuard no_grad;
  return eq(a, b).to(kInt64).sum().item<int64_t>() == a.numel();
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  NoGradGuard no_grad;
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  Tensor diff = abs(x - y);
  Tensor tol = abs(y) * rtol + atol;
  // NaN never compares close, matching PyTorch with equal_nan=false.
  return le(diff, tol).to(kInt64).sum().item<int64_t>() ==
         numel_of(broadcast_shapes(a.sizes(), b.sizes(), "allclose"));
}

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  detail::check_defined("where", condition, "condition");
  detail::check_defined("where", a, "self");
  detail::check_defined("where", b, "other");
  TANDEM_CHECK(condition.dtype() == kBool,
               "where: expected a bool condition, got ",
               condition.dtype());
  detail::check_same_device("where", {&condition, &a, &b});
  IntList shape = broadcast_shapes(
      broadcast_shapes(condition.sizes(), a.sizes(), "where"), b.sizes(), "where");
  ScalarType common = detail::result_type(a, b);
  Tensor ca = a.dtype() == common ? a : a.detach().to(common);
  Tensor cb = b.dtype() == common ? b : b.detach().to(common);
  Tensor out = detail::make_empty(shape, common, a.device());
  detail::kernels_for(out).where(out,
                                 detail::broadcast_to_raw(condition, shape),
                                 detail::broadcast_to_raw(ca, shape),
                                 detail::broadcast_to_raw(cb, shape));
  if (autograd::any_requires_grad({&a, &b})) {
    IntList sa = a.sizes(), sb = b.sizes();
    ScalarType ta = a.dtype(), tb = b.dtype();
    Tensor cond = condition.detach();
    autograd::record_function("WhereBackward", {a, b}, {&out}, [=](const tensor_list& g) {
      Tensor zero = zeros_like(g[0]);
      return tensor_list{reduce_grad(where(cond, g[0], zero), sa, ta),
                         reduce_grad(where(cond, zero, g[0]), sb, tb)};
    });
  }
  return out;
}

}  // namespace tandem
