// dropout2d: dropout with one draw per channel. The mask is [N, C, 1, 1]
// (or [C, 1, 1]) and broadcasts over each plane; as for dropout, mul's
// backward gives the gradient g * mask.
#include "ops/dropout_mask.h"
#include "ops/op_utils.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"

namespace tandem {

Tensor dropout2d(const Tensor& x, double p, bool train) {
  const profiler::Span span = detail::op_span("dropout2d", {&x});
  detail::check_defined("dropout2d", x, "input");
  TANDEM_CHECK(p >= 0 && p <= 1, "dropout2d: expected probability p in [0, 1], got ", p);
  TANDEM_CHECK(x.dim() == 3 || x.dim() == 4,
               "dropout2d: expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] ",
               "(batched) input, got shape ",
               x.sizes());
  if (!train || p == 0) return x;
  detail::check_floating("dropout2d", x, "input");
  if (p == 1) return mul(x, 0.0);
  IntList mask_shape = x.sizes();
  mask_shape.end()[-1] = 1;
  mask_shape.end()[-2] = 1;
  return mul(x, detail::dropout_mask(mask_shape, x, p, "dropout2d"));
}

}  // namespace tandem
