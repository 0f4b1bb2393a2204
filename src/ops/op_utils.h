// Private helpers every op uses: argument checks that speak alike, raw
// tensor construction for kernels, and the kernel table lookup.
#pragma once

#include <initializer_list>
#include <vector>

#include "backend/dispatch.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Throws unless `t` is defined: "<op>: argument '<name>' is undefined".
void check_defined(const char* op, const Tensor& t, const char* name);

/// Throws unless all tensors are on one device, naming the op and both
/// devices: "add: expected all tensors on the same device, got cpu:0 and
/// cpu:1". Undefined tensors are skipped.
void check_same_device(const char* op, std::initializer_list<const Tensor*> ts);
void check_same_device(const char* op, const std::vector<Tensor>& ts);

/// Throws unless `t` is float32 or float64.
void check_floating(const char* op, const Tensor& t, const char* name);

/// A new contiguous tensor (uninitialised) without autograd state.
Tensor make_empty(const IntList& sizes, ScalarType dtype, Device device);

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
