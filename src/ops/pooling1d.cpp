// max_pool1d and avg_pool1d: the checks in 1-D terms, then the 2-D pooling
// over the input seen with a height of 1 ([N, C, 1, L]) and a 1 x k window.
// A window of one row pools exactly the cells a 1-D window would, in the
// same order, so values, indices (h is 0, so h * W + w is the position
// along L) and gradients are the 1-D ones.
#include "ops/op_utils.h"
#include "tandem/ops/pooling.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

// Floor division for a possibly negative numerator.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Checks a 1-D pooling's input and window in `op`'s terms (the 2-D op
// would name itself and the unsqueezed shape); returns the stride.
int64_t checked_window(const char* op,
                       const Tensor& input,
                       int64_t kernel,
                       const std::optional<ExpandingArray<1>>& stride,
                       int64_t padding,
                       int64_t dilation,
                       bool ceil_mode) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  TANDEM_CHECK(input.dim() == 2 || input.dim() == 3,
               op,
               ": expected a 2-D [C, L] (unbatched) or 3-D [N, C, L] (batched) input, ",
               "got shape ",
               input.sizes());
  TANDEM_CHECK(input.size(-1) > 0 && input.size(-2) > 0,
               op,
               ": expected an input with non-empty channel and length dims, got shape ",
               input.sizes());
  const int64_t step = stride ? (*stride)[0] : kernel;
  detail::check_at_least(op, "kernel_size", {kernel}, 1);
  detail::check_at_least(op, "stride", {step}, 1);
  detail::check_at_least(op, "padding", {padding}, 0);
  detail::check_at_least(op, "dilation", {dilation}, 1);
  TANDEM_CHECK(padding <= kernel / 2,
               op,
               ": padding should be at most half of the kernel size, got padding ",
               padding,
               " for kernel_size ",
               kernel);
  const int64_t length = input.size(-1);
  const int64_t span = length + 2 * padding - dilation * (kernel - 1) - 1;
  int64_t out = floor_div(span + (ceil_mode ? step - 1 : 0), step) + 1;
  if (ceil_mode && (out - 1) * step >= length + padding) --out;
  TANDEM_CHECK(out >= 1,
               op,
               ": the window (kernel_size ",
               kernel,
               ", dilation ",
               dilation,
               ") does not fit in the input of shape ",
               input.sizes(),
               " with padding ",
               padding);
  return step;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& input,
    ExpandingArray<1> kernel_size,
    std::optional<ExpandingArray<1>> stride,
    ExpandingArray<1> padding,
    ExpandingArray<1> dilation,
    bool ceil_mode) {
  const int64_t step = checked_window(
      "max_pool1d", input, kernel_size[0], stride, padding[0], dilation[0], ceil_mode);
  auto [values, indices] = max_pool2d_with_indices(unsqueeze(input, -2),
                                                   {1, kernel_size[0]},
                                                   ExpandingArray<2>({1, step}),
                                                   {0, padding[0]},
                                                   {1, dilation[0]},
                                                   ceil_mode);
  return {squeeze(values, -2), squeeze(indices, -2)};
}

Tensor max_pool1d(const Tensor& input,
                  ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride,
                  ExpandingArray<1> padding,
                  ExpandingArray<1> dilation,
                  bool ceil_mode) {
  const profiler::Span span = detail::op_span("max_pool1d", {&input});
  return std::get<0>(
      max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool1d(const Tensor& input,
                  ExpandingArray<1> kernel_size,
                  std::optional<ExpandingArray<1>> stride,
                  ExpandingArray<1> padding,
                  bool ceil_mode,
                  bool count_include_pad) {
  const profiler::Span span = detail::op_span("avg_pool1d", {&input});
  const int64_t step = checked_window(
      "avg_pool1d", input, kernel_size[0], stride, padding[0], 1, ceil_mode);
  const Tensor out = avg_pool2d(unsqueeze(input, -2),
                                {1, kernel_size[0]},
                                ExpandingArray<2>({1, step}),
                                {0, padding[0]},
                                ceil_mode,
                                count_include_pad);
  return squeeze(out, -2);
}

}  // namespace tandem
