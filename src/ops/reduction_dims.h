// Private: the dim lists of reductions (sum, mean, norm, var, ...), shared
// so every reduction reads `dims` and `keepdim` the same way.
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Sorted, wrapped, duplicate-free dims; an empty list means every dim.
/// Throws naming `op` on a dim out of range or listed twice.
IntList normalize_dims(const char* op, const Tensor& x, const IntList& dims);

/// `sizes` with the (normalized) reduced dims set to 1 (keepdim) or
/// removed.
IntList reduced_shape(const IntList& sizes, const IntList& dims, bool keepdim);

/// How many elements each output of a reduction over (normalized) `dims`
/// combines.
int64_t reduced_count(const Tensor& x, const IntList& dims);

}  // namespace tandem::detail
