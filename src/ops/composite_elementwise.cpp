// Elementwise ops that LibTorch programs call and that are compositions of
// other ops (their gradients come from the parts): masked_fill, addcmul,
// addcdiv, and max/min of two tensors.
#include "ops/op_utils.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem {
namespace {

void check_mask(const Tensor& x, const Tensor& mask) {
  detail::check_defined("masked_fill", x, "self");
  detail::check_defined("masked_fill", mask, "mask");
  TANDEM_CHECK(mask.dtype() == kBool,
               "masked_fill: expected a bool mask, got ",
               mask.dtype(),
               " (shape ",
               mask.sizes(),
               ")");
}

}  // namespace

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  check_mask(x, mask);
  detail::check_scalar_fits("masked_fill", value, x.dtype());
  return where(mask, scalar_tensor(value, x.options()), x);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value) {
  check_mask(x, mask);
  detail::check_defined("masked_fill", value, "value");
  TANDEM_CHECK(value.dim() == 0,
               "masked_fill: expected a 0-dim value tensor, got shape ",
               value.sizes());
  return where(mask, value.dtype() == x.dtype() ? value : value.to(x.dtype()), x);
}

Tensor addcmul(const Tensor& x,
               const Tensor& tensor1,
               const Tensor& tensor2,
               Scalar value) {
  return add(x, mul(tensor1, tensor2), value);
}

Tensor addcdiv(const Tensor& x,
               const Tensor& tensor1,
               const Tensor& tensor2,
               Scalar value) {
  detail::check_defined("addcdiv", tensor1, "tensor1");
  detail::check_defined("addcdiv", tensor2, "tensor2");
  TANDEM_CHECK(tensor1.is_floating_point() || tensor2.is_floating_point(),
               "addcdiv: integer division is not supported (tensor1 is ",
               tensor1.dtype(),
               ", tensor2 is ",
               tensor2.dtype(),
               "); convert one of them with .to(kFloat32)");
  return add(x, div(tensor1, tensor2), value);
}

Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }

}  // namespace tandem
