// conv2d: argument checks in PyTorch's terms, the kernel call and the
// backward node. The arithmetic (im2col + GEMM) is in backend/cpu/conv.cpp;
// under create_graph the backward is conv_recorded_backward.cpp's instead.
#include "tandem/ops/conv.h"

#include "ops/conv_recorded_backward.h"
#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

constexpr const char* kOp = "conv2d";

void check_operands(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  detail::check_defined(kOp, input, "input");
  detail::check_defined(kOp, weight, "weight");
  detail::check_same_device(kOp, {&input, &weight, &bias});
  detail::check_floating(kOp, input, "input");
  detail::check_same_dtype(kOp, weight, "weight", input, "input");
  detail::check_same_dtype(kOp, bias, "bias", input, "input");
  detail::check_image_input(kOp, input);
  TANDEM_CHECK(weight.dim() == 4,
               "conv2d: expected a 4-D weight [out_channels, in_channels / groups, ",
               "kernel_h, kernel_w], got shape ",
               weight.sizes());
  TANDEM_CHECK(weight.size(2) > 0 && weight.size(3) > 0,
               "conv2d: kernel size should be greater than zero, got a weight of shape ",
               weight.sizes());
}

void check_channels(const Tensor& input,
                    const Tensor& weight,
                    const Tensor& bias,
                    int64_t groups) {
  TANDEM_CHECK(groups >= 1, "conv2d: groups must be positive, got ", groups);
  const int64_t out_channels = weight.size(0);
  TANDEM_CHECK(out_channels % groups == 0,
               "conv2d: groups=",
               groups,
               " must divide the output channels, but weight has shape ",
               weight.sizes());
  const int64_t in_channels = input.size(-3);
  TANDEM_CHECK(in_channels == weight.size(1) * groups,
               "conv2d: input of shape ",
               input.sizes(),
               " has ",
               in_channels,
               " channels, but weight of shape ",
               weight.sizes(),
               " with groups=",
               groups,
               " expects ",
               weight.size(1) * groups);
  if (!bias.defined()) return;
  TANDEM_CHECK(bias.dim() == 1 && bias.size(0) == out_channels,
               "conv2d: expected bias of shape [",
               out_channels,
               "] (weight has ",
               out_channels,
               " output channels), got ",
               bias.sizes());
}

// The output size along one dim; the dilated kernel must fit in the padded
// input.
int64_t output_size(const Tensor& input,
                    const Tensor& weight,
                    const backend::Conv2dParams& p,
                    int d) {
  const int64_t padded = input.size(-2 + d) + 2 * p.padding[d];
  const int64_t extent = p.dilation[d] * (weight.size(2 + d) - 1) + 1;
  TANDEM_CHECK(extent <= padded,
               "conv2d: kernel of shape ",
               weight.sizes(),
               " (extent ",
               extent,
               " with dilation ",
               p.dilation[d],
               ") is larger than the padded input (",
               padded,
               ") along ",
               d == 0 ? "the height" : "the width",
               "; input shape ",
               input.sizes(),
               ", padding ",
               IntList(p.padding.begin(), p.padding.end()));
  return (padded - extent) / p.stride[d] + 1;
}

void record_backward(const Tensor& input,
                     const Tensor& weight,
                     const Tensor& bias,
                     const backend::Conv2dParams& params,
                     Tensor& out) {
  if (!autograd::any_requires_grad({&input, &weight, &bias})) return;
  const bool need_input = input.requires_grad(), need_weight = weight.requires_grad();
  const bool need_bias = bias.defined() && bias.requires_grad();
  // Both operands, as PyTorch saves them: the kernel reads their shapes
  // even when only one of them gets a gradient.
  SavedVariable saved_input(input), saved_weight(weight);
  autograd::record_function(
      "Conv2dBackward", {input, weight, bias}, {&out}, [=](const tensor_list& g) {
        const char* node = "Conv2dBackward";
        const Tensor x = saved_input.unpack(node), w = saved_weight.unpack(node);
        if (GradMode::is_enabled()) {
          return detail::recorded_conv2d_backward(
              g[0], x, w, params, need_input, need_weight, need_bias);
        }
        const Tensor grad_out = g[0].contiguous();
        Tensor gi = detail::gradient_like(need_input, x);
        Tensor gw = detail::gradient_like(need_weight, w);
        Tensor gb = detail::gradient_like(need_bias, bias);
        detail::kernels_for(grad_out).conv2d_backward(gi,
                                                      gw,
                                                      gb,
                                                      grad_out,
                                                      x.detach().contiguous(),
                                                      w.detach().contiguous(),
                                                      params);
        return tensor_list{gi, gw, gb};
      });
}

Tensor conv2d_batched(const Tensor& input,
                      const Tensor& weight,
                      const Tensor& bias,
                      const backend::Conv2dParams& params,
                      int64_t out_h,
                      int64_t out_w) {
  Tensor out = detail::make_empty(
      {input.size(0), weight.size(0), out_h, out_w}, input.dtype(), input.device());
  detail::kernels_for(out).conv2d(out,
                                  input.detach().contiguous(),
                                  weight.detach().contiguous(),
                                  bias.defined() ? bias.detach().contiguous() : Tensor(),
                                  params);
  record_backward(input, weight, bias, params, out);
  return out;
}

}  // namespace

Tensor conv2d(const Tensor& input,
              const Tensor& weight,
              const Tensor& bias,
              ExpandingArray<2> stride,
              ExpandingArray<2> padding,
              ExpandingArray<2> dilation,
              int64_t groups) {
  const profiler::Span span = detail::op_span("conv2d", {&input, &weight, &bias});
  check_operands(input, weight, bias);
  detail::check_at_least(kOp, "stride", stride.vec(), 1);
  detail::check_at_least(kOp, "padding", padding.vec(), 0);
  detail::check_at_least(kOp, "dilation", dilation.vec(), 1);
  check_channels(input, weight, bias, groups);
  const backend::Conv2dParams params{*stride, *padding, *dilation, groups};
  const int64_t out_h = output_size(input, weight, params, 0);
  const int64_t out_w = output_size(input, weight, params, 1);
  if (input.dim() == 4) return conv2d_batched(input, weight, bias, params, out_h, out_w);
  return conv2d_batched(input.unsqueeze(0), weight, bias, params, out_h, out_w)
      .squeeze(0);
}

}  // namespace tandem
