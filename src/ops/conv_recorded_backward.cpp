#include "ops/conv_recorded_backward.h"

#include <algorithm>
#include <array>
#include <vector>

#include "tandem/ops/conv.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/reduction.h"
#include "tandem/ops/shape.h"

namespace tandem::detail {
namespace {

// Note [Convolution backward as convolutions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Per spatial dim, with stride s, padding p, dilation d and kernel k,
//   out[n, o, i] = sum_{c, a} x[n, c, i*s - p + a*d] * w[o, c, a].
// The weight's gradient sum_{n, i} g[n, o, i] x[n, c, a*d - p + i*s] is a
// convolution of x with g where batch and channels trade places: input
// x^T [C, N, H], weight g^T [O, N, Ho], stride d, padding p, dilation s,
// cropped to the kernel's k positions and transposed back.
// The input's gradient sum_{o, a} g[n, o, i] w[o, c, a] over i*s - p + a*d
// = h is a stride-1 convolution of g spread out by s (s - 1 zeros between
// neighbours) with the kernel flipped and its channel dims swapped
// (per group), dilation d and padding P = d(k-1) - p. A negative P is
// handled by cropping the result, and rows past the spread gradient's end
// by zeros appended to it. Everything here is a recorded op, so these
// gradients are differentiable again.

// `g` with stride - 1 zeros between neighbours along `dim`.
Tensor spread(const Tensor& g, int64_t dim, int64_t stride) {
  const int64_t n = g.size(dim);
  if (stride == 1 || n == 0) return g;
  Tensor columns = pad_end(g.unsqueeze(dim + 1), dim + 1, stride - 1);
  IntList merged = g.sizes();
  merged[dim] = n * stride;
  return columns.reshape(merged).narrow(dim, 0, (n - 1) * stride + 1);
}

// `t` reversed along `dim`.
Tensor flip(const Tensor& t, int64_t dim) {
  const int64_t n = t.size(dim);
  const Tensor reversed = (n - 1) - arange(n, TensorOptions(kInt64).device(t.device()));
  return index_select(t, dim, reversed);
}

Tensor input_gradient(const Tensor& g,
                      const Tensor& x,
                      const Tensor& w,
                      const backend::Conv2dParams& p) {
  const int64_t groups = p.groups;
  const int64_t group_out = w.size(0) / groups;
  const Tensor flipped = flip(flip(w, 2), 3);
  std::vector<Tensor> blocks;  // per group, [C/groups, O/groups, kh, kw]
  for (int64_t k = 0; k < groups; ++k) {
    blocks.push_back(flipped.narrow(0, k * group_out, group_out).transpose(0, 1));
  }
  const Tensor kernel = groups == 1 ? blocks.front() : cat(blocks, 0);
  Tensor spread_g = spread(spread(g, 2, p.stride[0]), 3, p.stride[1]);
  std::array<int64_t, 2> padding{}, crop{};
  for (int d = 0; d < 2; ++d) {
    const int64_t reach = p.dilation[d] * (w.size(2 + d) - 1);
    const int64_t wanted = reach - p.padding[d];
    padding[d] = std::max<int64_t>(wanted, 0);
    crop[d] = padding[d] - wanted;
    // Zeros at the end so the result reaches the input's last row: the
    // forward's last window can stop short of it, and a stride-1
    // convolution over `length` entries gives length + 2 padding - reach.
    const int64_t length = spread_g.size(2 + d);
    spread_g = pad_end(
        spread_g, 2 + d, crop[d] + x.size(2 + d) + reach - 2 * padding[d] - length);
  }
  const Tensor r = conv2d(spread_g,
                          kernel,
                          {},
                          1,
                          {padding[0], padding[1]},
                          {p.dilation[0], p.dilation[1]},
                          groups);
  return r.narrow(2, crop[0], x.size(2)).narrow(3, crop[1], x.size(3));
}

Tensor weight_gradient(const Tensor& g,
                       const Tensor& x,
                       const Tensor& w,
                       const backend::Conv2dParams& p) {
  const int64_t groups = p.groups;
  const int64_t group_in = x.size(1) / groups, group_out = w.size(0) / groups;
  std::vector<Tensor> blocks;  // per group, [O/groups, C/groups, kh, kw]
  for (int64_t k = 0; k < groups; ++k) {
    const Tensor xk = x.narrow(1, k * group_in, group_in).transpose(0, 1);
    const Tensor gk = g.narrow(1, k * group_out, group_out).transpose(0, 1);
    Tensor r = conv2d(xk,
                      gk,
                      {},
                      {p.dilation[0], p.dilation[1]},
                      {p.padding[0], p.padding[1]},
                      {p.stride[0], p.stride[1]});
    blocks.push_back(r.narrow(2, 0, w.size(2)).narrow(3, 0, w.size(3)).transpose(0, 1));
  }
  return groups == 1 ? blocks.front() : cat(blocks, 0);
}

}  // namespace

Tensor pad_end(const Tensor& t, int64_t dim, int64_t count) {
  if (count <= 0) return t;
  IntList shape = t.sizes();
  shape[dim] = count;
  return cat({t, zeros(shape, t.options())}, dim);
}

autograd::tensor_list recorded_conv2d_backward(const Tensor& g,
                                               const Tensor& x,
                                               const Tensor& w,
                                               const backend::Conv2dParams& params,
                                               bool need_input,
                                               bool need_weight,
                                               bool need_bias) {
  return {need_input ? input_gradient(g, x, w, params) : Tensor(),
          need_weight ? weight_gradient(g, x, w, params) : Tensor(),
          need_bias ? sum(g, {0, 2, 3}) : Tensor()};
}

}  // namespace tandem::detail
