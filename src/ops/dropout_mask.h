// Private to ops: the mask that dropout and dropout2d multiply by.
#pragma once

#include "tandem/core/int_list.h"
#include "tandem/core/tensor.h"

namespace tandem::detail {

/// bernoulli(1 - p) / (1 - p) shaped `sizes`, in `like`'s dtype and on its
/// device: from the default generator, or inside a SampleKeys scope
/// (invariant mode) keyed by sample along the scope's dim. `op` names the
/// caller in errors.
Tensor dropout_mask(const IntList& sizes, const Tensor& like, double p, const char* op);

}  // namespace tandem::detail
