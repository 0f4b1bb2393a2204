// var and std over all elements or some dims. var is a composition (its
// gradient, 2 (x - mean) / (n - correction), comes from the parts); std has
// its own backward so that a zero deviation gives a zero gradient, as in
// PyTorch, where sqrt's would be 0/0.
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

void check_floating_input(const char* op, const Tensor& x) {
  detail::check_defined(op, x, "self");
  detail::check_floating(op, x, "self");
}

// n - correction, the divisor of the squared deviations.
double divisor(const Tensor& x, const IntList& dims, bool unbiased) {
  return static_cast<double>(detail::reduced_count(x, dims)) - (unbiased ? 1 : 0);
}

// x minus its mean over the (normalized) dims.
Tensor deviation(const Tensor& x, const IntList& dims) {
  return x - mean(x, dims, /*keepdim=*/true);
}

}  // namespace

Tensor var(const Tensor& x) { return var(x, IntList{}, /*unbiased=*/true); }

Tensor var(const Tensor& x, const IntList& dim, bool unbiased, bool keepdim) {
  check_floating_input("var", x);
  const IntList dims = detail::normalize_dims("var", x, dim);
  const Tensor d = deviation(x, dims);
  return sum(d * d, dims, keepdim) / divisor(x, dims, unbiased);
}

Tensor std(const Tensor& x) { return std(x, IntList{}, /*unbiased=*/true); }

Tensor std(const Tensor& x, const IntList& dim, bool unbiased, bool keepdim) {
  check_floating_input("std", x);
  const IntList dims = detail::normalize_dims("std", x, dim);
  Tensor out;
  {
    const NoGradGuard no_grad;
    out = sqrt(var(x, dims, unbiased, keepdim));
  }
  if (autograd::any_requires_grad({&x})) {
    SavedVariable vx(x), vout(out, /*is_output=*/true);
    const IntList keep_shape = detail::reduced_shape(x.sizes(), dims, /*keepdim=*/true);
    const double n = divisor(x, dims, unbiased);
    autograd::record_function("StdBackward", {x}, {&out}, [=](const tensor_list& g) {
      Tensor s = vout.unpack("StdBackward").reshape(keep_shape);
      Tensor scale =
          where(eq(s, 0), zeros({}, s.options()), g[0].reshape(keep_shape) / (s * n));
      return tensor_list{deviation(vx.unpack("StdBackward"), dims) * scale};
    });
  }
  return out;
}

}  // namespace tandem
