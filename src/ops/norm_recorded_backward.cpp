#include "ops/norm_recorded_backward.h"

#include "tandem/ops/elementwise.h"
#include "tandem/ops/reduction.h"

namespace tandem::detail {
namespace {

using autograd::tensor_list;

// sum over `dims`, none meaning none (sum() would take all).
Tensor sum_over(const Tensor& t, const IntList& dims) {
  return dims.empty() ? t : sum(t, dims);
}

// y = xhat * w + b with xhat = (x - mean) * rstd, the statistics over
// `stat_dims` of x itself. With gy = g * w, the input's gradient is
//   rstd * (gy - mean(gy) - xhat * mean(gy * xhat)),
// the means over stat_dims; the weight's is sum(g * xhat) and the bias's
// sum(g), over `param_dims` (the dims the parameters are broadcast along).
// `w` is the weight shaped to broadcast against x (or undefined).
tensor_list self_normalized_backward(const Tensor& g,
                                     const Tensor& x,
                                     const Tensor& w,
                                     const IntList& stat_dims,
                                     const IntList& param_dims,
                                     double eps,
                                     NormGradients need) {
  const Tensor centered = x - mean(x, stat_dims, true);
  const Tensor rstd = rsqrt(mean(centered * centered, stat_dims, true) + eps);
  const Tensor xhat = centered * rstd;
  Tensor gi;
  if (need.input) {
    const Tensor gy = w.defined() ? g * w : g;
    gi =
        rstd * (gy - mean(gy, stat_dims, true) - xhat * mean(gy * xhat, stat_dims, true));
  }
  return {gi,
          need.weight ? sum_over(g * xhat, param_dims) : Tensor(),
          need.bias ? sum_over(g, param_dims) : Tensor()};
}

}  // namespace

tensor_list recorded_batch_norm_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& weight,
                                         bool training,
                                         const Tensor& mean,
                                         const Tensor& invstd,
                                         double eps,
                                         NormGradients need) {
  IntList per_channel(x.dim(), 1);  // [1, C, 1, ...]
  per_channel[1] = x.size(1);
  IntList dims = {0};  // all but the channel dim
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const Tensor w = weight.defined() ? weight.reshape(per_channel) : Tensor();
  if (training) return self_normalized_backward(g, x, w, dims, dims, eps, need);
  const Tensor scale = invstd.reshape(per_channel);
  Tensor gi;
  if (need.input) gi = w.defined() ? g * w * scale : g * scale;
  Tensor gw;
  if (need.weight) gw = sum(g * ((x - mean.reshape(per_channel)) * scale), dims);
  return {gi, gw, need.bias ? sum(g, dims) : Tensor()};
}

tensor_list recorded_layer_norm_backward(const Tensor& g,
                                         const Tensor& x,
                                         const Tensor& weight,
                                         int64_t normalized_dims,
                                         double eps,
                                         NormGradients need) {
  IntList stat_dims, param_dims;
  for (int64_t d = 0; d < x.dim(); ++d) {
    (d < x.dim() - normalized_dims ? param_dims : stat_dims).push_back(d);
  }
  return self_normalized_backward(g, x, weight, stat_dims, param_dims, eps, need);
}

}  // namespace tandem::detail
