// Private: a new tensor straight from the device's memory, for the code
// below and inside the ops (kernels' scratch space, ops' outputs). Users
// call tandem::empty, which adds the options' requires_grad and pinning.
//
//   Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
#pragma once

#include "tandem/core/tensor.h"

namespace tandem::detail {

/// A new contiguous tensor (uninitialised) without autograd state. Throws
/// for negative sizes and for more bytes than int64 can count.
Tensor make_empty(const IntList& sizes, ScalarType dtype, Device device);

}  // namespace tandem::detail
