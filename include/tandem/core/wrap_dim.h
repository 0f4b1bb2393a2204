// wrap_dim: a dimension index as PyTorch accepts it (negative ones count
// from the end) turned into one in [0, ndim), or an IndexError naming the
// op. Core's own accessors use it (Tensor::size(-1)), as does every op
// that takes a dim.
//
//   int64_t d = tandem::wrap_dim(-1, x.dim(), "softmax");  // x.dim() - 1
#pragma once

#include <cstdint>

namespace tandem {

/// Wraps a possibly negative `dim` into [0, ndim); throws naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace tandem
