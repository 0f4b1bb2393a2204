// softmax and log_softmax along any dim, forward and backward.
//
// The kernels take contiguous [outer, n, inner] views (n = the softmax dim),
// so a softmax over an inner dim runs in place of a permute and copy.
#include "tandem/ops/activation.h"

#include <algorithm>

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// `t` (contiguous) seen as [outer, n, inner] around dim `dim`.
Tensor rows_view(const Tensor& t, int64_t dim) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= t.sizes()[d];
  for (int64_t d = dim + 1; d < t.dim(); ++d) inner *= t.sizes()[d];
  const int64_t n = t.dim() == 0 ? 1 : t.sizes()[dim];
  return detail::raw_view(
      t, {outer, n, inner}, {n * inner, inner, 1}, t.storage_offset());
}

// The backward kernels' formulas in recorded ops, for create_graph (y is
// the forward's result): softmax y * (g - sum(g * y)), log_softmax
// g - exp(y) * sum(g), the sums along `dim`.
Tensor recorded_backward(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  auto row_sum = [&](const Tensor& t) { return y.dim() == 0 ? t : sum(t, {dim}, true); };
  return log ? g - exp(y) * row_sum(g) : y * (g - row_sum(g * y));
}

Tensor softmax_impl(
    const char* op, const char* node, const Tensor& x, int64_t dim, bool log) {
  detail::check_defined(op, x, "input");
  detail::check_floating(op, x, "input");
  // A 0-dim tensor has one element and softmax accepts dim 0 or -1 for it.
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  Tensor in = x.is_contiguous() ? x : x.detach().contiguous();
  Tensor out = detail::make_empty(x.sizes(), x.dtype(), x.device());
  if (out.numel() > 0) {
    detail::kernels_for(out).softmax(rows_view(out, dim), rows_view(in, dim), log);
  }
  if (!autograd::any_requires_grad({&x})) return out;
  SavedVariable saved(out, /*is_output=*/true);
  autograd::record_function(node, {x}, {&out}, [=](const tensor_list& g) {
    Tensor y = saved.unpack(node);
    if (GradMode::is_enabled()) return tensor_list{recorded_backward(g[0], y, dim, log)};
    Tensor grad_out = g[0].contiguous();
    Tensor grad_in = detail::make_empty(y.sizes(), y.dtype(), y.device());
    if (y.numel() > 0) {
      detail::kernels_for(y).softmax_backward(
          rows_view(grad_in, dim), rows_view(grad_out, dim), rows_view(y, dim), log);
    }
    return tensor_list{grad_in};
  });
  return out;
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim) {
  const profiler::Span span = detail::op_span("softmax", {&x});
  return softmax_impl("softmax", "SoftmaxBackward", x, dim, /*log=*/false);
}

Tensor log_softmax(const Tensor& x, int64_t dim) {
  const profiler::Span span = detail::op_span("log_softmax", {&x});
  return softmax_impl("log_softmax", "LogSoftmaxBackward", x, dim, /*log=*/true);
}

}  // namespace tandem
