// conv1d: the 1-D argument checks in conv1d's terms, then conv2d over the
// input seen with a height of 1 ([N, C, 1, L]) and a [Cout, Cin, 1, k]
// weight. Each output is the same sum of products as a 1-D kernel would
// form, and the gradients (and second derivatives) are conv2d's.
#include "ops/op_utils.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/shape.h"

namespace tandem {

Tensor conv1d(const Tensor& input,
              const Tensor& weight,
              const Tensor& bias,
              ExpandingArray<1> stride,
              ExpandingArray<1> padding,
              ExpandingArray<1> dilation,
              int64_t groups) {
  const profiler::Span span = detail::op_span("conv1d", {&input, &weight});
  const char* op = "conv1d";
  detail::check_defined(op, input, "input");
  detail::check_defined(op, weight, "weight");
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               "conv1d: expected a 2-D [C, L] (unbatched) or 3-D [N, C, L] (batched) ",
               "input, got shape ",
               input.sizes());
  TANDEM_CHECK(weight.dim() == 3,
               "conv1d: expected a 3-D weight [out_channels, in_channels / groups, ",
               "kernel_size], got shape ",
               weight.sizes());
  detail::check_at_least(op, "stride", stride.vec(), 1);
  detail::check_at_least(op, "padding", padding.vec(), 0);
  detail::check_at_least(op, "dilation", dilation.vec(), 1);
  TANDEM_CHECK(groups >= 1, "conv1d: groups must be positive, got ", groups);
  TANDEM_CHECK(input.size(-2) == weight.size(1) * groups,
               "conv1d: input of shape ",
               input.sizes(),
               " has ",
               input.size(-2),
               " channels, but weight of shape ",
               weight.sizes(),
               " with groups=",
               groups,
               " expects ",
               weight.size(1) * groups);
  const int64_t span_k = dilation[0] * (weight.size(2) - 1) + 1;
  TANDEM_CHECK(input.size(-1) + 2 * padding[0] >= span_k,
               "conv1d: the kernel (size ",
               weight.size(2),
               ", dilation ",
               dilation[0],
               ") is longer than the padded input (length ",
               input.size(-1),
               " + 2 * padding ",
               padding[0],
               "), input of shape ",
               input.sizes());
  const Tensor out = conv2d(unsqueeze(input, -2),
                            unsqueeze(weight, -2),
                            bias,
                            {1, stride[0]},
                            {0, padding[0]},
                            {1, dilation[0]},
                            groups);
  return squeeze(out, -2);
}

}  // namespace tandem
