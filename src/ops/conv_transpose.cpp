// conv_transpose1d and conv_transpose2d: argument checks in PyTorch's
// terms, the kernel calls and the backward node. There is no kernel of
// their own: see the Note below.
//
// Note [Transposed convolution from convolution kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// conv_transpose2d(x, w) with stride s, padding p, dilation d and groups
// is the gradient of y -> conv2d(y, w) (same s, p, d and groups, w read as
// a convolution weight: its dim 0, x's channels, holds conv2d's outputs)
// with respect to y, taken at output gradient x. So each product is one
// the convolution kernels already make, with the roles swapped:
//   forward          conv2d_backward's input gradient, at grad_out x, the
//                    output tensor giving y's shape (on CPU a GEMM W^T @ x
//                    per sample and group, then col2im, Note [Convolution
//                    as GEMM]; on CUDA cuDNN's backward-data); the bias is
//                    added after;
//   input gradient   conv2d(grad_y, w): the forward convolution;
//   weight gradient  conv2d_backward's weight gradient of input grad_y and
//                    output gradient x;
//   bias gradient    grad_y summed over samples and positions.
// output_padding lengthens y at the end. With output_padding >= stride
// (allowed when the dilation is larger) conv2d over y gives floor(
// output_padding / stride) more positions than x has: x gets that many
// zeros appended (they add nothing) and its gradient drops them.
// A 1x1 input without padding, output_padding, dilation or groups (a DCGAN
// generator's first layer) puts each input cell once on every kernel cell:
// the output is x [N, Cin] @ w [Cin, Cout * kh * kw] for the whole batch,
// one GEMM where the per-sample products would be matrix-vector ones, so
// that case is the recorded matmul (and its gradients matmul's).
// Under create_graph the same products are recorded ops (conv2d and
// recorded_conv2d_backward's weight gradient, Note [Convolution backward as
// convolutions]), so the gradients can be differentiated again.
// conv_transpose1d is conv_transpose2d over a height of 1.
#include "tandem/ops/conv_transpose.h"

#include <array>

#include "ops/conv_recorded_backward.h"
#include "ops/op_utils.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/graph/node.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem {
namespace {

using autograd::SavedVariable;
using autograd::tensor_list;

// The user's per-dimension arguments (1 or 2 values each), for messages.
struct UserArgs {
  template <size_t D>
  UserArgs(const char* op,
           ExpandingArray<D> stride,
           ExpandingArray<D> padding,
           ExpandingArray<D> output_padding,
           int64_t groups,
           ExpandingArray<D> dilation)
      : op(op),
        dims(D),
        stride(stride.vec()),
        padding(padding.vec()),
        output_padding(output_padding.vec()),
        dilation(dilation.vec()),
        groups(groups) {}

  const char* op;
  int64_t dims;  // spatial dims: 1 or 2
  IntList stride, padding, output_padding, dilation;
  int64_t groups;
};

void check_operands(const UserArgs& a,
                    const Tensor& input,
                    const Tensor& weight,
                    const Tensor& bias) {
  detail::check_defined(a.op, input, "input");
  detail::check_defined(a.op, weight, "weight");
  detail::check_same_device(a.op, {&input, &weight, &bias});
  detail::check_floating(a.op, input, "input");
  detail::check_same_dtype(a.op, weight, "weight", input, "input");
  detail::check_same_dtype(a.op, bias, "bias", input, "input");
  const char* layout = a.dims == 1 ? "[C, L] (unbatched) or 3-D [N, C, L]"
                                   : "[C, H, W] (unbatched) or 4-D [N, C, H, W]";
  TANDEM_CHECK(input.dim() == a.dims + 1 || input.dim() == a.dims + 2,
               a.op,
               ": expected a ",
               a.dims + 1,
               "-D ",
               layout,
               " input, got shape ",
               input.sizes());
  TANDEM_CHECK(weight.dim() == a.dims + 2,
               a.op,
               ": expected a ",
               a.dims + 2,
               "-D weight [in_channels, out_channels / groups, ",
               a.dims == 1 ? "kernel_size" : "kernel_h, kernel_w",
               "], got shape ",
               weight.sizes());
  for (int64_t d = 2; d < weight.dim(); ++d) {
    TANDEM_CHECK(weight.size(d) > 0,
                 a.op,
                 ": kernel size should be greater than zero, got a weight of shape ",
                 weight.sizes());
  }
  detail::check_at_least(a.op, "stride", a.stride, 1);
  detail::check_at_least(a.op, "padding", a.padding, 0);
  detail::check_at_least(a.op, "output_padding", a.output_padding, 0);
  detail::check_at_least(a.op, "dilation", a.dilation, 1);
  for (int64_t d = 0; d < a.dims; ++d) {
    TANDEM_CHECK(a.output_padding[d] < a.stride[d] || a.output_padding[d] < a.dilation[d],
                 a.op,
                 ": output_padding must be smaller than either stride or dilation, got ",
                 "output_padding ",
                 a.output_padding,
                 ", stride ",
                 a.stride,
                 ", dilation ",
                 a.dilation);
  }
}

void check_channels(const UserArgs& a,
                    const Tensor& input,
                    const Tensor& weight,
                    const Tensor& bias) {
  TANDEM_CHECK(a.groups >= 1, a.op, ": groups must be positive, got ", a.groups);
  const int64_t in_channels = weight.size(0);
  TANDEM_CHECK(in_channels % a.groups == 0,
               a.op,
               ": groups=",
               a.groups,
               " must divide the input channels, but weight has shape ",
               weight.sizes());
  TANDEM_CHECK(input.size(-a.dims - 1) == in_channels,
               a.op,
               ": input of shape ",
               input.sizes(),
               " has ",
               input.size(-a.dims - 1),
               " channels, but weight of shape ",
               weight.sizes(),
               " expects ",
               in_channels);
  if (!bias.defined()) return;
  const int64_t out_channels = weight.size(1) * a.groups;
  TANDEM_CHECK(bias.dim() == 1 && bias.size(0) == out_channels,
               a.op,
               ": expected bias of shape [",
               out_channels,
               "] (weight ",
               weight.sizes(),
               " with groups=",
               a.groups,
               " gives ",
               out_channels,
               " output channels), got ",
               bias.sizes());
}

// Everything the 2-D kernels need: the convolution whose input gradient
// this is, output_padding, and how many zeros x needs appended (the Note).
struct Geometry {
  backend::Conv2dParams conv;
  std::array<int64_t, 2> output_padding{0, 0};
  std::array<int64_t, 2> extra{0, 0};
};

// x [N, Cin, H, W] with geometry g's zeros appended.
Tensor padded_input(const Tensor& x, const Geometry& g) {
  return detail::pad_end(detail::pad_end(x, 2, g.extra[0]), 3, g.extra[1]);
}

// The gradient of x from that of the padded x.
Tensor unpadded(const Tensor& gx, const Geometry& g) {
  if (g.extra[0] == 0 && g.extra[1] == 0) return gx;
  return gx.narrow(2, 0, gx.size(2) - g.extra[0]).narrow(3, 0, gx.size(3) - g.extra[1]);
}

// The gradients {x, w, bias} from the convolution kernels (the Note), each
// only where `need` asks.
tensor_list kernel_backward(const Tensor& grad_y,
                            const Tensor& x,
                            const Tensor& w,
                            const Geometry& geo,
                            std::array<bool, 3> need) {
  const Tensor g = grad_y.contiguous();
  const Tensor xp = padded_input(x.detach(), geo).contiguous();
  const Tensor wc = w.detach().contiguous();
  Tensor gx;
  if (need[0]) {
    Tensor gxp = detail::make_empty(xp.sizes(), g.dtype(), g.device());
    detail::kernels_for(g).conv2d(gxp, g, wc, Tensor(), geo.conv);
    gx = unpadded(gxp, geo);
  }
  Tensor gw = detail::gradient_like(need[1], w);
  if (need[1]) detail::kernels_for(g).conv2d_backward({}, gw, {}, xp, g, wc, geo.conv);
  return {gx, gw, need[2] ? sum(g, {0, 2, 3}) : Tensor()};
}

// The same gradients as recorded ops, for create_graph.
tensor_list recorded_backward(const Tensor& grad_y,
                              const Tensor& x,
                              const Tensor& w,
                              const Geometry& geo,
                              std::array<bool, 3> need) {
  const backend::Conv2dParams& p = geo.conv;
  Tensor gx, gw;
  if (need[0]) {
    gx = unpadded(conv2d(grad_y,
                         w,
                         {},
                         {p.stride[0], p.stride[1]},
                         {p.padding[0], p.padding[1]},
                         {p.dilation[0], p.dilation[1]},
                         p.groups),
                  geo);
  }
  if (need[1]) {
    gw = detail::recorded_conv2d_backward(
        padded_input(x, geo), grad_y, w, p, false, true, false)[1];
  }
  return {gx, gw, need[2] ? sum(grad_y, {0, 2, 3}) : Tensor()};
}

void record_backward(const Tensor& x,
                     const Tensor& w,
                     const Tensor& bias,
                     const Geometry& geo,
                     Tensor& out) {
  if (!autograd::any_requires_grad({&x, &w, &bias})) return;
  const std::array<bool, 3> need{
      x.requires_grad(), w.requires_grad(), bias.defined() && bias.requires_grad()};
  SavedVariable saved_x(x), saved_w(w);
  autograd::record_function(
      "ConvTranspose2dBackward", {x, w, bias}, {&out}, [=](const tensor_list& g) {
        const char* node = "ConvTranspose2dBackward";
        const Tensor xs = saved_x.unpack(node), ws = saved_w.unpack(node);
        if (GradMode::is_enabled()) return recorded_backward(g[0], xs, ws, geo, need);
        return kernel_backward(g[0], xs, ws, geo, need);
      });
}

// x [N, Cin, H, W], w [Cin, Cout / groups, kh, kw] -> [N, Cout, out_h, out_w].
Tensor conv_transpose_batched(const Tensor& x,
                              const Tensor& w,
                              const Tensor& bias,
                              const Geometry& geo,
                              std::array<int64_t, 2> out_size) {
  const int64_t out_channels = w.size(1) * geo.conv.groups;
  Tensor out = detail::make_empty(
      {x.size(0), out_channels, out_size[0], out_size[1]}, x.dtype(), x.device());
  const Tensor xp = padded_input(x.detach(), geo).contiguous();
  // `out` is also the convolution's input here: only its shape is read.
  detail::kernels_for(out).conv2d_backward(
      out, {}, {}, xp, out, w.detach().contiguous(), geo.conv);
  if (bias.defined()) out.add_(bias.detach().view({1, out_channels, 1, 1}));
  record_backward(x, w, bias, geo, out);
  return out;
}

// Whether each input cell of x [N, Cin, H, W] lands on the whole kernel
// and nothing overlaps: a 1x1 image, no padding, output_padding, dilation
// or groups (a DCGAN generator's first layer).
bool reaches_each_cell_once(const Tensor& x, const Geometry& geo) {
  const backend::Conv2dParams& p = geo.conv;
  for (int d = 0; d < 2; ++d) {
    if (x.size(2 + d) != 1 || p.padding[d] != 0 || geo.output_padding[d] != 0 ||
        p.dilation[d] != 1) {
      return false;
    }
  }
  return p.groups == 1;
}

// Then the output is one GEMM over the whole batch (Note [Transposed
// convolution from convolution kernels]), recorded as matmul.
Tensor single_cell_conv_transpose(const Tensor& x, const Tensor& w, const Tensor& bias) {
  const int64_t n = x.size(0), in = w.size(0), out = w.size(1);
  const int64_t kh = w.size(2), kw = w.size(3);
  Tensor y = matmul(x.reshape({n, in}), w.reshape({in, out * kh * kw}))
                 .reshape({n, out, kh, kw});
  return bias.defined() ? y + bias.view({1, out, 1, 1}) : y;
}

// Both ops: the checks on the user's operands, then conv_transpose_batched
// on 2-D views (a 1-d op's height is 1).
Tensor conv_transpose(const UserArgs& a,
                      const Tensor& input,
                      const Tensor& weight,
                      const Tensor& bias) {
  const profiler::Span span = detail::op_span(a.op, {&input, &weight, &bias});
  check_operands(a, input, weight, bias);
  check_channels(a, input, weight, bias);
  const bool batched = input.dim() == a.dims + 2;
  Tensor x = batched ? input : input.unsqueeze(0);
  Tensor w = weight;
  if (a.dims == 1) {
    x = x.unsqueeze(2);
    w = w.unsqueeze(2);
  }
  Geometry geo;
  geo.conv.groups = a.groups;
  std::array<int64_t, 2> out_size{};
  for (int64_t d = 0; d < 2; ++d) {
    const int64_t j = d - (2 - a.dims);  // the user's dim, or -1 for a 1-d op's height
    if (j >= 0) {
      geo.conv.stride[d] = a.stride[j];
      geo.conv.padding[d] = a.padding[j];
      geo.conv.dilation[d] = a.dilation[j];
      geo.output_padding[d] = a.output_padding[j];
    }
    const int64_t s = geo.conv.stride[d];
    geo.extra[d] = geo.output_padding[d] / s;
    out_size[d] = (x.size(2 + d) - 1) * s - 2 * geo.conv.padding[d] +
                  geo.conv.dilation[d] * (w.size(2 + d) - 1) + geo.output_padding[d] + 1;
  }
  const IntList user_size(out_size.end() - a.dims, out_size.end());
  TANDEM_CHECK(out_size[0] > 0 && out_size[1] > 0,
               a.op,
               ": the output size ",
               user_size,
               " is too small (must be positive), for input of shape ",
               input.sizes(),
               ", weight of shape ",
               weight.sizes(),
               ", stride ",
               a.stride,
               ", padding ",
               a.padding,
               ", dilation ",
               a.dilation,
               " and output_padding ",
               a.output_padding);
  Tensor out = reaches_each_cell_once(x, geo)
                   ? single_cell_conv_transpose(x, w, bias)
                   : conv_transpose_batched(x, w, bias, geo, out_size);
  if (a.dims == 1) out = out.squeeze(2);
  return batched ? out : out.squeeze(0);
}

}  // namespace

Tensor conv_transpose2d(const Tensor& input,
                        const Tensor& weight,
                        const Tensor& bias,
                        ExpandingArray<2> stride,
                        ExpandingArray<2> padding,
                        ExpandingArray<2> output_padding,
                        int64_t groups,
                        ExpandingArray<2> dilation) {
  const UserArgs a("conv_transpose2d", stride, padding, output_padding, groups, dilation);
  return conv_transpose(a, input, weight, bias);
}

Tensor conv_transpose1d(const Tensor& input,
                        const Tensor& weight,
                        const Tensor& bias,
                        ExpandingArray<1> stride,
                        ExpandingArray<1> padding,
                        ExpandingArray<1> output_padding,
                        int64_t groups,
                        ExpandingArray<1> dilation) {
  const UserArgs a("conv_transpose1d", stride, padding, output_padding, groups, dilation);
  return conv_transpose(a, input, weight, bias);
}

}  // namespace tandem
