// norm: the vector p-norm over all elements or some dims. The forward is
// computed from existing ops without history, and the backward is written
// out (PyTorch's linalg_vector_norm_backward) so that a zero norm gives a
// zero gradient where the composition would give 0/0. The backward is made
// of differentiable ops, so create_graph works through it.
#include <cmath>
#include <tuple>

#include "ops/op_utils.h"
#include "ops/reduction_dims.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// The largest (or smallest) of `a` over the normalized `dims`, keepdim.
Tensor extremum_keepdim(const Tensor& a, const IntList& dims, bool largest) {
  if (a.dim() == 0) return largest ? max(a) : min(a);
  Tensor out = a;
  for (int64_t d : dims) {
    out = std::get<0>(largest ? max(out, d, /*keepdim=*/true) : min(out, d, true));
  }
  return out;
}

// The norm of x over `dims` (normalized), keepdim, without history.
Tensor norm_keepdim(const Tensor& x, Scalar p, const IntList& dims) {
  const NoGradGuard no_grad;
  Tensor a = abs(x);
  if (std::isinf(p)) return extremum_keepdim(a, dims, /*largest=*/p > 0);
  if (p == 0) return sum(ne(x, 0), dims, /*keepdim=*/true).to(x.dtype());
  if (p == 1) return sum(a, dims, /*keepdim=*/true);
  if (p == 2) return sqrt(sum(x * x, dims, /*keepdim=*/true));
  return pow(sum(pow(a, p), dims, /*keepdim=*/true), 1 / p);
}

// d norm / dx times the gradient g_k of the norm n_k (both keepdim).
Tensor norm_backward(const Tensor& x,
                     const Tensor& n_k,
                     const Tensor& g_k,
                     Scalar p,
                     const IntList& dims) {
  Tensor zero = zeros({}, g_k.options());
  if (p == 0) return zeros_like(x);
  if (std::isinf(p)) {
    // The gradient of max |x|, shared evenly among ties.
    Tensor hit = eq(abs(x), n_k).to(x.dtype());
    Tensor ties = sum(hit, dims, /*keepdim=*/true);
    return sign(x) * hit * (g_k / ties);
  }
  Tensor scaled = p == 2 ? x : where(eq(x, 0), zero, sign(x) * pow(abs(x), p - 1));
  Tensor scale = p == 1 ? g_k : where(eq(n_k, 0), zero, g_k / pow(n_k, p - 1));
  return scaled * scale;
}

}  // namespace

Tensor norm(const Tensor& x, Scalar p) { return norm(x, p, IntList{}, false); }

Tensor norm(const Tensor& x, Scalar p, const IntList& dim, bool keepdim) {
  detail::check_defined("norm", x, "self");
  detail::check_floating("norm", x, "self");
  TANDEM_CHECK(p >= 0 || std::isinf(p), "norm: expected p >= 0 or +-inf, got ", p);
  const IntList dims = detail::normalize_dims("norm", x, dim);
  const Tensor n_k = norm_keepdim(x, p, dims);
  Tensor out = n_k.reshape(detail::reduced_shape(x.sizes(), dims, keepdim));
  if (autograd::any_requires_grad({&x})) {
    SavedVariable vx(x), vout(out, /*is_output=*/true);
    const IntList keep_shape = n_k.sizes();
    autograd::record_function("NormBackward", {x}, {&out}, [=](const tensor_list& g) {
      return tensor_list{norm_backward(vx.unpack("NormBackward"),
                                       vout.unpack("NormBackward").reshape(keep_shape),
                                       g[0].reshape(keep_shape),
                                       p,
                                       dims)};
    });
  }
  return out;
}

}  // namespace tandem
