// logsumexp: log(sum(exp(x))) over some dims, shifted by the maximum (held
// constant, so the gradient is exactly the softmax) so it cannot overflow;
// PyTorch's formula, including its handling of infinite maxima.
#include <cmath>
#include <tuple>

#include "ops/op_utils.h"
#include "ops/reduction_dims.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/reduction.h"

namespace tandem {

Tensor logsumexp(const Tensor& x, const IntList& dim, bool keepdim) {
  detail::check_defined("logsumexp", x, "self");
  detail::check_floating("logsumexp", x, "self");
  const IntList dims = detail::normalize_dims("logsumexp", x, dim);
  Tensor shift = x.detach();
  if (x.dim() == 0) {
    shift = max(shift);
  } else {
    for (int64_t d : dims) shift = std::get<0>(max(shift, d, /*keepdim=*/true));
  }
  // An all -inf (or +inf) slice would give inf - inf; shift it by 0.
  shift = where(eq(abs(shift), INFINITY), zeros({}, shift.options()), shift);
  Tensor total = log(sum(exp(x - shift), dims, keepdim));
  return total + shift.reshape(detail::reduced_shape(x.sizes(), dims, keepdim));
}

}  // namespace tandem
