// Private helpers every op uses: argument checks that speak alike, raw
// tensor construction for kernels, and the kernel table lookup.
#pragma once

#include <initializer_list>
#include <optional>
#include <vector>

#include "backend/dispatch.h"
#include "core/empty_tensor.h"  // make_empty, the ops' allocation
#include "tandem/core/profiler.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// The profiler's span of op `op` on its first defined input's device;
/// when the session records shapes, with the inputs' shapes and dtypes.
/// Off, it costs what any span costs (Note [Profiler spans]).
profiler::Span op_span(const char* op, std::initializer_list<const Tensor*> inputs);
profiler::Span op_span(const char* op, const std::vector<Tensor>& inputs);

/// Throws unless `t` is defined: "<op>: argument '<name>' is undefined".
void check_defined(const char* op, const Tensor& t, const char* name);

/// Throws unless all tensors are on one device, naming the op and both
/// devices: "add: expected all tensors on the same device, got cpu:0 and
/// cpu:1". Undefined tensors are skipped.
void check_same_device(const char* op, std::initializer_list<const Tensor*> ts);
void check_same_device(const char* op, const std::vector<Tensor>& ts);

/// Throws unless `t` is float32 or float64.
void check_floating(const char* op, const Tensor& t, const char* name);

/// Throws unless `t` (skipped when undefined) has the dtype of `reference`:
/// "conv2d: expected bias of dtype float32 (as input), got float64".
void check_same_dtype(const char* op,
                      const Tensor& t,
                      const char* name,
                      const Tensor& reference,
                      const char* reference_name);

/// Throws unless every value of a per-dimension argument (stride, padding,
/// ...) is at least `min` (1: "must be positive", 0: "must be
/// non-negative"), naming the op and the values.
void check_at_least(const char* op, const char* name, const IntList& values, int64_t min);

/// Throws unless `input` is an image batch [N, C, H, W] or one image
/// [C, H, W], naming the op and the shape.
void check_image_input(const char* op, const Tensor& input);

/// The dtype of a binary op on `a` and `b`, with PyTorch's rule for 0-dim
/// tensors: they decide the dtype only where they are of a higher category
/// (bool < integral < floating) than the dimensioned operand, so
/// float32[3] + float64[] is float32 but int64[3] + float64[] is float64.
ScalarType result_type(const Tensor& a, const Tensor& b);

/// The dtype of `t op scalar`: the tensor's, unless an integral tensor meets
/// a non-whole scalar (then float32, PyTorch's default dtype) or a bool one
/// meets a whole number (then int64).
ScalarType scalar_result_type(const Tensor& t, Scalar s);

/// The dtype of clamp(t, min, max): the bounds promote like scalar operands.
ScalarType clamp_result_type(const Tensor& t,
                             std::optional<Scalar> min,
                             std::optional<Scalar> max);

/// Whether `value` can be stored in a `dtype` tensor: always for floating
/// types and bool; for integers when finite and in range (a negative value
/// for uint8 wraps, as a Python int does in PyTorch).
bool scalar_fits(Scalar value, ScalarType dtype);
/// Throws naming `op` unless scalar_fits(value, dtype).
void check_scalar_fits(const char* op, Scalar value, ScalarType dtype);

/// Whether a value of dtype `from` may be written into a `to` tensor by an
/// in-place op (PyTorch's canCast: never floating into integral, never
/// non-bool into bool).
bool can_cast(ScalarType from, ScalarType to);

/// Bool results support only the arithmetic PyTorch gives them (+ and
/// maximum as or, * and minimum as and); throws naming `op` otherwise.
void check_bool_arithmetic(const char* op, backend::BinaryOp kind, ScalarType result);

/// For a backward formula: an uninitialised gradient of shape `sizes` with
/// `like`'s dtype and device, or undefined when it is not `needed`.
Tensor gradient_like(bool needed, const IntList& sizes, const Tensor& like);
/// The same, shaped like `like` (which may be undefined when not needed).
Tensor gradient_like(bool needed, const Tensor& like);

/// A view of `t` with the given geometry, without autograd state (for
/// handing broadcast or permuted operands to kernels).
Tensor raw_view(const Tensor& t, IntList sizes, IntList strides, int64_t offset);

/// `t` viewed with `sizes` by broadcasting (stride 0 on stretched dims);
/// `sizes` must be a valid broadcast target. No autograd.
Tensor broadcast_to_raw(const Tensor& t, const IntList& sizes);

/// The kernel table for `t`'s device.
inline const backend::Kernels& kernels_for(const Tensor& t) {
  return backend::kernels(t.device());
}

}  // namespace tandem::detail
