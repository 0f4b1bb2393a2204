// dropout: zero elements at random during training, scaling the survivors so
// the expected value is unchanged.
//
// The output is x * mask with mask = bernoulli(1 - p) / (1 - p), so mul's
// backward gives the gradient g * mask without a node of our own. Inside a
// SampleKeys scope (DataParallel) the mask is keyed by sample instead of
// drawn from the default generator (core/sample_keys.h).
#include "tandem/ops/activation.h"

#include <cstdint>

#include "ops/dropout_mask.h"
#include "ops/op_utils.h"
#include "tandem/core/generator.h"
#include "tandem/core/sample_keys.h"
#include "tandem/core/wrap_dim.h"
#include "tandem/ops/elementwise.h"

namespace tandem {

namespace detail {
namespace {

// Note [What a mask is keyed by]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The keyed kernel takes row r along its dim as sample first_row + r of the
// batch (Note [Sample-keyed masks] in backend/cpu/random.cpp). That is right
// for a tensor laid out by sample, which has the piece's `rows` rows there.
// Attention weights are laid out [batch * heads, L, S], sample-major as
// PyTorch's multi-head attention packs them: keyed row by row, the rows of
// the second replica would take the keys of the first one's, and their
// masks would repeat. So a mask with k * rows rows is drawn through a view
// that splits the dim into [rows, k]: each sample's k rows become that
// sample's elements, still a pure function of the sample whatever the cut
// (k = 1 is the plain case, unchanged). A tensor with any other count there
// is not laid out by sample; it is drawn as one sample's worth under the
// piece's first row ([1, numel]), so that pieces still draw apart and a
// fixed cut (invariant mode's micro-batches) draws the same.
struct KeyedView {
  Tensor mask;  // a view of the mask
  int64_t dim;  // its sample dim
};

KeyedView keyed_view(const Tensor& mask, const SampleKeys& keys, int64_t dim) {
  const int64_t size = mask.size(dim);
  const int64_t rows = keys.rows();
  if (size == rows) return {mask, dim};
  if (rows > 0 && size > 0 && size % rows == 0) {
    IntList split;  // dim's size -> [rows, size / rows]
    for (int64_t d = 0; d < mask.dim(); ++d) {
      if (d == dim) split.push_back(rows);
      split.push_back(d == dim ? size / rows : mask.size(d));
    }
    return {mask.view(split), dim};
  }
  return {mask.view({1, mask.numel()}), 0};
}

}  // namespace

Tensor dropout_mask(const IntList& sizes, const Tensor& like, double p, const char* op) {
  Tensor mask = make_empty(sizes, like.dtype(), like.device());
  const auto& kernels = kernels_for(mask);
  if (SampleKeys* keys = SampleKeys::current()) {
    TANDEM_CHECK(mask.dim() > 0,
                 op,
                 ": a sample-keyed mask (DataParallel over several devices, or invariant "
                 "mode) needs the batch dim ",
                 keys->dim(),
                 ", but the input is 0-dimensional");
    const KeyedView keyed =
        keyed_view(mask, *keys, wrap_dim(keys->dim(), mask.dim(), op));
    kernels.bernoulli_keyed(
        keyed.mask, 1 - p, keys->next_key(), keys->first_row(), keyed.dim);
  } else {
    kernels.bernoulli(mask, 1 - p, default_generator());
  }
  kernels.unary(backend::UnaryOp::MulScalar, mask, mask, 1 / (1 - p), 0);
  return mask;
}

}  // namespace detail

Tensor dropout(const Tensor& x, double p, bool train) {
  const profiler::Span span = detail::op_span("dropout", {&x});
  detail::check_defined("dropout", x, "input");
  TANDEM_CHECK(p >= 0 && p <= 1, "dropout: expected probability p in [0, 1], got ", p);
  if (!train || p == 0) return x;
  detail::check_floating("dropout", x, "input");
  // Like PyTorch, x * 0 rather than fresh zeros: the result keeps x's
  // history (its gradient is zero) and NaN stays NaN.
  if (p == 1) return mul(x, 0.0);
  return mul(x, detail::dropout_mask(x.sizes(), x, p, "dropout"));
}

}  // namespace tandem
