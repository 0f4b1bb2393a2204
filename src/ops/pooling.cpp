// max_pool2d and avg_pool2d: PyTorch's argument checks and output sizes, the
// kernel calls on the input seen as planes [N * C, H, W], and the backward
// nodes. The window arithmetic is in backend/cpu/pooling.cpp.
#include "tandem/ops/pooling.h"

#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// Floor division for a possibly negative numerator (PyTorch's div_rtn).
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The output size along one dim, as PyTorch's pooling_output_shape: with
// ceil_mode a partial last window counts unless it would start in the
// right padding.
int64_t pooled_size(int64_t size,
                    int64_t kernel,
                    int64_t stride,
                    int64_t padding,
                    int64_t dilation,
                    bool ceil_mode) {
  const int64_t span = size + 2 * padding - dilation * (kernel - 1) - 1;
  int64_t out = floor_div(span + (ceil_mode ? stride - 1 : 0), stride) + 1;
  if (ceil_mode && (out - 1) * stride >= size + padding) --out;
  return out;
}

// Checks the input and window, and returns the window with the stride
// defaulting to the kernel size.
backend::Pool2dParams checked_window(const char* op,
                                     const Tensor& input,
                                     ExpandingArray<2> kernel_size,
                                     const std::optional<ExpandingArray<2>>& stride,
                                     ExpandingArray<2> padding,
                                     ExpandingArray<2> dilation) {
  detail::check_defined(op, input, "input");
  detail::check_floating(op, input, "input");
  detail::check_image_input(op, input);
  for (int64_t d = input.dim() - 3; d < input.dim(); ++d) {
    TANDEM_CHECK(
        input.size(d) > 0,
        op,
        ": expected an input with non-empty channel and spatial dims, got shape ",
        input.sizes());
  }
  const ExpandingArray<2> step = stride.value_or(kernel_size);
  detail::check_at_least(op, "kernel_size", kernel_size.vec(), 1);
  detail::check_at_least(op, "stride", step.vec(), 1);
  detail::check_at_least(op, "padding", padding.vec(), 0);
  detail::check_at_least(op, "dilation", dilation.vec(), 1);
  for (size_t d = 0; d < 2; ++d) {
    TANDEM_CHECK(padding[d] <= kernel_size[d] / 2,
                 op,
                 ": padding should be at most half of the kernel size, got padding ",
                 padding,
                 " for kernel_size ",
                 kernel_size);
  }
  return {*kernel_size, *step, *padding, *dilation};
}

// The output shape: input's with H and W pooled; throws when a dim would
// have no window.
IntList pooled_shape(const char* op,
                     const Tensor& input,
                     const backend::Pool2dParams& p,
                     bool ceil_mode) {
  IntList shape = input.sizes();
  for (int d = 0; d < 2; ++d) {
    const int64_t dim = input.dim() - 2 + d;
    shape[dim] = pooled_size(input.size(dim),
                             p.kernel[d],
                             p.stride[d],
                             p.padding[d],
                             p.dilation[d],
                             ceil_mode);
  }
  TANDEM_CHECK(shape[shape.size() - 2] >= 1 && shape.back() >= 1,
               op,
               ": the window (kernel_size ",
               IntList(p.kernel.begin(), p.kernel.end()),
               ", dilation ",
               IntList(p.dilation.begin(), p.dilation.end()),
               ") does not fit in the input of shape ",
               input.sizes(),
               " with padding ",
               IntList(p.padding.begin(), p.padding.end()),
               ": the output would have shape ",
               shape);
  return shape;
}

// A contiguous tensor seen as planes [P, H, W] (P = all leading dims).
Tensor as_planes(const Tensor& t) {
  const int64_t h = t.size(-2), w = t.size(-1);
  const int64_t planes = t.numel() / (h * w);
  return detail::raw_view(t, {planes, h, w}, {h * w, w, 1}, t.storage_offset());
}

// max_pool2d's backward with recorded ops, for create_graph: each output's
// gradient added at its window's argmax (a scatter_add per plane, so the
// result is differentiable in g). Index -1 (a window of padding only) sends
// nothing.
Tensor recorded_max_pool_backward(const Tensor& g,
                                  const Tensor& index,
                                  const IntList& input_shape) {
  const int64_t plane = input_shape.end()[-2] * input_shape.end()[-1];
  const int64_t planes = plane == 0 ? 0 : numel_of(input_shape) / plane;
  const int64_t outputs = g.size(-2) * g.size(-1);
  const Tensor valid = index >= 0;
  const Tensor targets = (index * valid.to(kInt64)).reshape({planes, outputs});
  const Tensor sources = (g * valid.to(g.dtype())).reshape({planes, outputs});
  return scatter_add(zeros({planes, plane}, g.options()), 1, targets, sources)
      .reshape(input_shape);
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& input,
    ExpandingArray<2> kernel_size,
    std::optional<ExpandingArray<2>> stride,
    ExpandingArray<2> padding,
    ExpandingArray<2> dilation,
    bool ceil_mode) {
  const char* op = "max_pool2d";
  const backend::Pool2dParams params =
      checked_window(op, input, kernel_size, stride, padding, dilation);
  const IntList out_shape = pooled_shape(op, input, params, ceil_mode);
  Tensor out = detail::make_empty(out_shape, input.dtype(), input.device());
  Tensor indices = detail::make_empty(out_shape, kInt64, input.device());
  if (out.numel() > 0) {
    detail::kernels_for(out).max_pool2d(as_planes(out),
                                        as_planes(indices),
                                        as_planes(input.detach().contiguous()),
                                        params);
  }
  if (autograd::any_requires_grad({&input})) {
    const IntList input_shape = input.sizes();
    SavedVariable saved_indices(indices);
    autograd::record_function(
        "MaxPool2dBackward", {input}, {&out}, [=](const tensor_list& g) {
          const Tensor index = saved_indices.unpack("MaxPool2dBackward");
          if (GradMode::is_enabled()) {
            return tensor_list{recorded_max_pool_backward(g[0], index, input_shape)};
          }
          const Tensor grad_out = g[0].contiguous();
          Tensor grad_in =
              detail::make_empty(input_shape, grad_out.dtype(), grad_out.device());
          if (grad_in.numel() > 0) {
            detail::kernels_for(grad_out).max_pool2d_backward(
                as_planes(grad_in), as_planes(grad_out), as_planes(index));
          }
          return tensor_list{grad_in};
        });
  }
  return {out, indices};
}

Tensor max_pool2d(const Tensor& input,
                  ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride,
                  ExpandingArray<2> padding,
                  ExpandingArray<2> dilation,
                  bool ceil_mode) {
  const profiler::Span span = detail::op_span("max_pool2d", {&input});
  return std::get<0>(
      max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& input,
                  ExpandingArray<2> kernel_size,
                  std::optional<ExpandingArray<2>> stride,
                  ExpandingArray<2> padding,
                  bool ceil_mode,
                  bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  const profiler::Span span = detail::op_span("avg_pool2d", {&input});
  const char* op = "avg_pool2d";
  const backend::Pool2dParams params =
      checked_window(op, input, kernel_size, stride, padding, /*dilation=*/1);
  TANDEM_CHECK(!divisor_override || *divisor_override != 0,
               "avg_pool2d: divisor_override must not be zero");
  const backend::AvgPoolDivisor divisor{count_include_pad, divisor_override.value_or(0)};
  const IntList out_shape = pooled_shape(op, input, params, ceil_mode);
  Tensor out = detail::make_empty(out_shape, input.dtype(), input.device());
  if (out.numel() > 0) {
    detail::kernels_for(out).avg_pool2d(
        as_planes(out), as_planes(input.detach().contiguous()), params, divisor);
  }
  if (autograd::any_requires_grad({&input})) {
    const IntList input_shape = input.sizes();
    autograd::record_function(
        "AvgPool2dBackward", {input}, {&out}, [=](const tensor_list& g) {
          const Tensor grad_out = g[0].contiguous();
          Tensor grad_in =
              detail::make_empty(input_shape, grad_out.dtype(), grad_out.device());
          if (grad_in.numel() > 0) {
            detail::kernels_for(grad_out).avg_pool2d_backward(
                as_planes(grad_in), as_planes(grad_out), params, divisor);
          }
          // Linear in g (the pooling's adjoint), so under create_graph its
          // own backward is the pooling again.
          autograd::record_function("AvgPool2dBackwardBackward",
                                    {g[0]},
                                    {&grad_in},
                                    [=](const tensor_list& gg) {
                                      return tensor_list{avg_pool2d(gg[0],
                                                                    kernel_size,
                                                                    stride,
                                                                    padding,
                                                                    ceil_mode,
                                                                    count_include_pad,
                                                                    divisor_override)};
                                    });
          return tensor_list{grad_in};
        });
  }
  return out;
}

}  // namespace tandem
