// Autograd for writes into a view (x[1] = y, x.narrow(0, 0, 2).copy_(y)):
// the written values become part of the base's history, as PyTorch's
// CopySlices makes them. See Note [Writing through a view].
#pragma once

#include "tandem/core/tensor.h"

namespace tandem::detail {

/// Whether a write into `t` must be recorded even when what is written
/// needs no gradient: t requires grad, or it views a tensor that does.
bool write_reaches_graph(const Tensor& t);

/// The base that copy_'s write into the view `t` must record into, or an
/// undefined tensor when t is not a view. Throws (before anything is
/// written) for a base whose layout the write cannot be mapped onto.
Tensor written_base(const Tensor& t, const char* op);

/// Records the write of `src` into `view` (already done) in `base`'s
/// history, and gives the view a history that reads it from the base.
void record_write_through_view(const Tensor& view, const Tensor& base, const Tensor& src);

}  // namespace tandem::detail
