// all and any: whether every (some) element is non-zero, counted with the
// existing comparison and sum ops. No gradient (the result is boolean).
#include "ops/op_utils.h"
#include "tandem/core/wrap_dim.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/reduction.h"

namespace tandem {
namespace {

// `every`: no element over `dims` is 0 (all); else some element is not 0
// (any). Empty `dims` means all of them. PyTorch keeps uint8 for uint8
// input (its old boolean type); else the result is bool.
Tensor truth_over(const Tensor& x, const IntList& dims, bool keepdim, bool every) {
  Tensor hits = sum(every ? eq(x, 0) : ne(x, 0), dims, keepdim);
  Tensor truth = every ? eq(hits, 0) : gt(hits, 0);
  return x.dtype() == kUInt8 ? truth.to(kUInt8) : truth;
}

Tensor truth_along(
    const char* op, const Tensor& x, int64_t dim, bool keepdim, bool every) {
  detail::check_defined(op, x, "self");
  return truth_over(x, IntList{wrap_dim(dim, x.dim(), op)}, keepdim, every);
}

}  // namespace

Tensor all(const Tensor& x) {
  detail::check_defined("all", x, "self");
  return truth_over(x, IntList{}, /*keepdim=*/false, /*every=*/true);
}

Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return truth_along("all", x, dim, keepdim, /*every=*/true);
}

Tensor any(const Tensor& x) {
  detail::check_defined("any", x, "self");
  return truth_over(x, IntList{}, /*keepdim=*/false, /*every=*/false);
}

Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return truth_along("any", x, dim, keepdim, /*every=*/false);
}

}  // namespace tandem
