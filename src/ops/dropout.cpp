// dropout: zero elements at random during training, scaling the survivors so
// the expected value is unchanged.
//
// The output is x * mask with mask = bernoulli(1 - p) / (1 - p), so mul's
// backward gives the gradient g * mask without a node of our own. Inside a
// SampleKeys scope (DataParallel) the mask is keyed by sample instead of
// drawn from the default generator (core/sample_keys.h).
#include "tandem/ops/activation.h"

#include "ops/dropout_mask.h"
#include "ops/op_utils.h"
#include "tandem/core/generator.h"
#include "tandem/core/sample_keys.h"
#include "tandem/core/wrap_dim.h"
#include "tandem/ops/elementwise.h"

namespace tandem {

namespace detail {

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
    kernels.bernoulli_keyed(mask,
                            1 - p,
                            keys->next_key(),
                            keys->first_row(),
                            wrap_dim(keys->dim(), mask.dim(), op));
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
