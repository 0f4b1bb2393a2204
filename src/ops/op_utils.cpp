// Shared argument checks, dtype rules and raw tensor construction for ops.
#include "ops/op_utils.h"

#include <cmath>
#include <sstream>
#include <type_traits>

namespace tandem::detail {

namespace {

template <typename Tensors>
profiler::Span op_span_over(const char* op, const Tensors& inputs) {
  const auto tensor = [](const auto& t) -> const Tensor& {
    if constexpr (std::is_pointer_v<std::decay_t<decltype(t)>>) {
      return *t;
    } else {
      return t;
    }
  };
  Device device(kCPU);
  for (const auto& t : inputs) {
    if (tensor(t).defined()) {
      device = tensor(t).device();
      break;
    }
  }
  profiler::Span span("op", op, device);
  span.time_on_queue(device);
  if (span.active() && profiler::recording_shapes()) {
    std::ostringstream shapes;
    std::ostringstream dtypes;
    shapes << "[";
    dtypes << "[";
    bool first = true;
    for (const auto& t : inputs) {
      shapes << (first ? "" : ", ");
      dtypes << (first ? "" : ", ");
      first = false;
      if (tensor(t).defined()) {
        shapes << tensor(t).sizes();
        dtypes << tensor(t).dtype();
      } else {
        shapes << "[]";
        dtypes << "undefined";
      }
    }
    span.arg("shapes", shapes.str() + "]").arg("dtypes", dtypes.str() + "]");
  }
  return span;
}

}  // namespace

profiler::Span op_span(const char* op, std::initializer_list<const Tensor*> inputs) {
  return op_span_over(op, inputs);
}

profiler::Span op_span(const char* op, const std::vector<Tensor>& inputs) {
  return op_span_over(op, inputs);
}

void check_defined(const char* op, const Tensor& t, const char* name) {
  TANDEM_CHECK(t.defined(), op, ": argument '", name, "' is undefined");
}

void check_same_device(const char* op, std::initializer_list<const Tensor*> ts) {
  const Tensor* first = nullptr;
  for (const Tensor* t : ts) {
    if (!t->defined()) continue;
    if (first == nullptr) {
      first = t;
      continue;
    }
    TANDEM_CHECK(t->device() == first->device(),
                 op,
                 ": expected all tensors on the same device, got ",
                 first->device(),
                 " and ",
                 t->device(),
                 " (move one with .to(device))");
  }
}

void check_same_device(const char* op, const std::vector<Tensor>& ts) {
  for (size_t i = 1; i < ts.size(); ++i) {
    check_same_device(op, {&ts[0], &ts[i]});
  }
}

void check_floating(const char* op, const Tensor& t, const char* name) {
  TANDEM_CHECK(t.is_floating_point(),
               op,
               ": expected '",
               name,
               "' to be float32 or float64, got ",
               t.dtype(),
               " (shape ",
               t.sizes(),
               ")");
}

void check_same_dtype(const char* op,
                      const Tensor& t,
                      const char* name,
                      const Tensor& reference,
                      const char* reference_name) {
  if (!t.defined()) return;
  TANDEM_CHECK(t.dtype() == reference.dtype(),
               op,
               ": expected ",
               name,
               " of dtype ",
               reference.dtype(),
               " (as ",
               reference_name,
               "), got ",
               t.dtype());
}

void check_at_least(const char* op,
                    const char* name,
                    const IntList& values,
                    int64_t min) {
  for (int64_t v : values) {
    TANDEM_CHECK(v >= min,
                 op,
                 ": ",
                 name,
                 min == 1 ? " must be positive" : " must be non-negative",
                 ", got ",
                 values);
  }
}

void check_image_input(const char* op, const Tensor& input) {
  TANDEM_CHECK(input.dim() == 3 || input.dim() == 4,
               op,
               ": expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] ",
               "(batched) input, got shape ",
               input.sizes());
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  if ((a.dim() == 0) == (b.dim() == 0)) return promote_types(a.dtype(), b.dtype());
  const ScalarType dimmed = a.dim() == 0 ? b.dtype() : a.dtype();
  const ScalarType zero_dim = a.dim() == 0 ? a.dtype() : b.dtype();
  if (is_floating_point(dimmed)) return dimmed;
  if (dimmed == kBool || is_floating_point(zero_dim)) {
    return promote_types(dimmed, zero_dim);
  }
  return dimmed;
}

ScalarType scalar_result_type(const Tensor& t, Scalar s) {
  if (is_integral(t.dtype()) && s != std::floor(s)) return kFloat32;
  if (t.dtype() == kBool) return kInt64;
  return t.dtype();
}

ScalarType clamp_result_type(const Tensor& t,
                             std::optional<Scalar> min,
                             std::optional<Scalar> max) {
  ScalarType dtype = t.dtype();
  for (std::optional<Scalar> bound : {min, max}) {
    if (bound) dtype = promote_types(dtype, scalar_result_type(t, *bound));
  }
  return dtype;
}

bool scalar_fits(Scalar value, ScalarType dtype) {
  if (!is_integral(dtype, /*include_bool=*/false)) return true;
  // Exclusive bounds: 2^63 is exactly representable as a double but not as
  // an int64.
  const double bound = dtype == kUInt8 ? 256.0 : 9223372036854775808.0;
  return std::isfinite(value) && value < bound && value > -bound;
}

void check_scalar_fits(const char* op, Scalar value, ScalarType dtype) {
  TANDEM_CHECK(scalar_fits(value, dtype),
               op,
               ": value ",
               value,
               " cannot be converted to ",
               dtype,
               " without overflow");
}

bool can_cast(ScalarType from, ScalarType to) {
  if (is_floating_point(from) && is_integral(to)) return false;
  return from == kBool || to != kBool;
}

void check_bool_arithmetic(const char* op, backend::BinaryOp kind, ScalarType result) {
  using backend::BinaryOp;
  TANDEM_CHECK(result != kBool || kind == BinaryOp::Add || kind == BinaryOp::Mul ||
                   kind == BinaryOp::Maximum || kind == BinaryOp::Minimum,
               op,
               ": not supported for bool tensors; convert them first, for ",
               "example with .to(kUInt8)");
}

Tensor gradient_like(bool needed, const IntList& sizes, const Tensor& like) {
  return needed ? make_empty(sizes, like.dtype(), like.device()) : Tensor();
}

Tensor gradient_like(bool needed, const Tensor& like) {
  return needed ? make_empty(like.sizes(), like.dtype(), like.device()) : Tensor();
}

Tensor raw_view(const Tensor& t, IntList sizes, IntList strides, int64_t offset) {
  return Tensor(std::make_shared<TensorImpl>(t.unsafe_impl()->storage(),
                                             t.dtype(),
                                             std::move(sizes),
                                             std::move(strides),
                                             offset));
}

Tensor broadcast_to_raw(const Tensor& t, const IntList& sizes) {
  if (t.sizes() == sizes) return t;
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t lead = nd - t.dim();
  TANDEM_INTERNAL_ASSERT(lead >= 0, "cannot broadcast ", t.sizes(), " to ", sizes);
  IntList strides(nd, 0);
  for (int64_t d = 0; d < t.dim(); ++d) {
    int64_t s = t.sizes()[d];
    TANDEM_INTERNAL_ASSERT(
        s == sizes[lead + d] || s == 1, "cannot broadcast ", t.sizes(), " to ", sizes);
    strides[lead + d] = s == 1 ? 0 : t.strides()[d];
  }
  return raw_view(t, sizes, std::move(strides), t.storage_offset());
}

}  // namespace tandem::detail
