// The rows of the op consistency table (op_cases_test.cpp runs them):
// one per differentiable op of tandem/ops/*.h and per interesting variant,
// each its inputs' shapes and ranges and the op applied to them.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem::testing::op_table {

using autograd::tensor_list;

// One input of a row: floating values uniform in [low, high) that require
// grad unless `constant`, or (index) int64 values in [low, high).
struct Input {
  IntList shape;
  double low = -2, high = 2;
  bool index = false;
  bool constant = false;
};

inline Input F(IntList shape) { return {std::move(shape)}; }
inline Input P(IntList shape) { return {std::move(shape), 0.5, 2.0}; }  // positive
inline Input I(IntList shape, int64_t high) {
  return {std::move(shape), 0, static_cast<double>(high), true};
}
inline Input U(IntList shape) { return {std::move(shape), 0.1, 0.9}; }  // probabilities
// Positive and without gradient: class weights, which PyTorch does not
// differentiate either.
inline Input W(IntList shape) { return {std::move(shape), 0.5, 2.0, false, true}; }

struct OpCase {
  std::string name;
  std::vector<Input> inputs;
  std::function<Tensor(const tensor_list&)> fn;
  bool second_derivatives = true;
};

inline void PrintTo(const OpCase& c, std::ostream* out) { *out << c.name; }

using L = const tensor_list&;

// Labels 1 and -1 on `like`'s device, in its dtype: [5] (or a 0-dim 1).
inline Tensor labels(const Tensor& like, bool scalar = false) {
  Tensor t = scalar ? scalar_tensor(1.0, kFloat64) : tensor({1.0, -1.0, 1.0, -1.0, -1.0});
  return t.to(like.device(), like.dtype());
}

inline std::vector<OpCase> op_cases() {
  return {
      // ---- elementwise ----
      {"add", {F({3, 4}), F({3, 4})}, [](L in) { return in[0] + in[1]; }},
      {"add_broadcast_alpha",
       {F({3, 1}), F({1, 4})},
       [](L in) { return add(in[0], in[1], 0.5); }},
      {"add_scalar", {F({5})}, [](L in) { return add(in[0], 1.5, 2); }},
      {"sub", {F({2, 3}), F({3})}, [](L in) { return sub(in[0], in[1], 2); }},
      {"sub_scalar", {F({5})}, [](L in) { return sub(in[0], 0.25); }},
      {"rsub_scalar", {F({5})}, [](L in) { return 3 - in[0]; }},
      {"mul", {F({4, 1, 3}), F({2, 1})}, [](L in) { return in[0] * in[1]; }},
      {"mul_zero_dim", {F({2, 3}), F({})}, [](L in) { return in[0] * in[1]; }},
      {"mul_scalar", {F({5})}, [](L in) { return in[0] * -1.5; }},
      {"div", {F({2, 3}), P({2, 3})}, [](L in) { return in[0] / in[1]; }},
      {"div_broadcast", {F({2, 3}), P({3})}, [](L in) { return in[0] / in[1]; }},
      {"div_scalar", {F({5})}, [](L in) { return in[0] / 3; }},
      {"rdiv_scalar", {P({5})}, [](L in) { return 2 / in[0]; }},
      {"pow_tensor", {P({2, 3}), F({2, 3})}, [](L in) { return pow(in[0], in[1]); }},
      {"pow_scalar", {F({5})}, [](L in) { return pow(in[0], 3); }},
      {"pow_fractional", {P({5})}, [](L in) { return pow(in[0], -1.5); }},
      {"pow_scalar_base", {F({5})}, [](L in) { return pow(1.5, in[0]); }},
      {"maximum", {F({3, 4}), F({4})}, [](L in) { return maximum(in[0], in[1]); }},
      {"minimum", {F({3, 4}), F({3, 1})}, [](L in) { return minimum(in[0], in[1]); }},
      {"neg", {F({5})}, [](L in) { return neg(in[0]); }},
      {"exp", {F({2, 3})}, [](L in) { return exp(in[0]); }},
      {"log", {P({2, 3})}, [](L in) { return log(in[0]); }},
      {"sqrt", {P({5})}, [](L in) { return sqrt(in[0]); }},
      {"rsqrt", {P({5})}, [](L in) { return rsqrt(in[0]); }},
      {"abs", {F({6})}, [](L in) { return abs(in[0]); }},
      {"sign", {F({6})}, [](L in) { return sign(in[0]) * in[0]; }},
      {"square", {F({6})}, [](L in) { return square(in[0]); }},
      {"reciprocal", {P({5})}, [](L in) { return reciprocal(in[0]); }},
      {"clamp", {F({8})}, [](L in) { return clamp(in[0], -1, 1); }},
      {"clamp_min", {F({8})}, [](L in) { return clamp_min(in[0], 0.3); }},
      {"clamp_max", {F({8})}, [](L in) { return clamp_max(in[0], -0.3); }},
      {"where", {F({3, 4}), F({4})}, [](L in) { return where(in[0] > 0, in[0], in[1]); }},
      {"clone", {F({3, 2})}, [](L in) { return in[0].clone() * in[0]; }},
      {"to_device",
       {F({3, 2})},
       [](L in) { return (in[0].to("cpu:2") * in[0].to("cpu:2")).to(in[0].device()); }},
      // ---- in place, on non-leaves (recorded through copy_) ----
      {"add_inplace",
       {F({2, 3}), F({3})},
       [](L in) { return (in[0] * 1).add_(in[1], 0.5); }},
      {"sub_inplace",
       {F({2, 3}), F({2, 1})},
       [](L in) { return (in[0] * 1).sub_(in[1]); }},
      {"mul_inplace",
       {F({2, 3}), F({2, 3})},
       [](L in) { return (in[0] * 1).mul_(in[1]); }},
      {"div_inplace", {F({2, 3}), P({3})}, [](L in) { return (in[0] * 1).div_(in[1]); }},
      {"scalar_inplace",
       {F({5})},
       [](L in) { return (in[0] * 1).mul_(3).add_(1).div_(2); }},
      {"clamp_inplace", {F({8})}, [](L in) { return (in[0] * 1).clamp_(-1, 0.5); }},
      {"relu_inplace", {F({8})}, [](L in) { return (in[0] * 1).relu_(); }},
      {"copy_inplace",
       {F({2, 3}), F({3})},
       [](L in) { return (in[0] * 1).copy_(in[1]) * in[0]; }},
      {"scatter_add_inplace",
       {F({3, 5}), I({3, 4}, 5), F({3, 4})},
       [](L in) { return (in[0] * 1).scatter_add_(1, in[1], in[2]); }},
      // ---- activations ----
      {"relu", {F({3, 4})}, [](L in) { return relu(in[0]); }},
      {"gelu", {F({3, 4})}, [](L in) { return gelu(in[0]); }},
      {"gelu_tanh", {F({3, 4})}, [](L in) { return gelu(in[0], "tanh"); }},
      {"sigmoid", {F({3, 4})}, [](L in) { return sigmoid(in[0]); }},
      {"tanh", {F({3, 4})}, [](L in) { return tanh(in[0]); }},
      {"softmax", {F({3, 5})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_dim0", {F({4, 3})}, [](L in) { return softmax(in[0], 0); }},
      {"softmax_3d", {F({2, 3, 4})}, [](L in) { return softmax(in[0], -2); }},
      {"log_softmax", {F({3, 5})}, [](L in) { return log_softmax(in[0], -1); }},
      {"log_softmax_dim0", {F({4, 3})}, [](L in) { return log_softmax(in[0], 0); }},
      {"leaky_relu", {F({3, 4})}, [](L in) { return leaky_relu(in[0], 0.2); }},
      {"leaky_relu_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return leaky_relu_(y);
       }},
      {"elu", {F({3, 4})}, [](L in) { return elu(in[0], 0.7); }},
      {"elu_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return elu_(y);
       }},
      {"selu", {F({3, 4})}, [](L in) { return selu(in[0]); }},
      {"silu", {F({3, 4})}, [](L in) { return silu(in[0]); }},
      {"mish", {F({3, 4})}, [](L in) { return mish(in[0]); }},
      {"softplus", {F({3, 4})}, [](L in) { return softplus(in[0]); }},
      {"softplus_beta_threshold",
       {F({3, 4})},
       [](L in) { return softplus(in[0], 2.0, 1.5); }},
      {"hardtanh", {F({3, 4})}, [](L in) { return hardtanh(in[0], -0.7, 1.2); }},
      {"hardtanh_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return hardtanh_(y);
       }},
      {"log_sigmoid", {F({3, 4})}, [](L in) { return log_sigmoid(in[0]); }},
      {"softsign", {F({3, 4})}, [](L in) { return softsign(in[0]); }},
      {"prelu", {F({2, 3, 4}), F({3})}, [](L in) { return prelu(in[0], in[1]); }},
      {"prelu_shared", {F({4, 5}), F({1})}, [](L in) { return prelu(in[0], in[1]); }},
      {"dropout_eval", {F({3, 4})}, [](L in) { return dropout(in[0], 0.5, false); }},
      // ---- reductions ----
      {"sum", {F({3, 4})}, [](L in) { return sum(in[0]); }},
      {"sum_dim", {F({3, 4})}, [](L in) { return sum(in[0], {1}); }},
      {"sum_dims_keepdim",
       {F({2, 3, 4})},
       [](L in) {
         return sum(in[0], {0, 2}, true);
       }},
      {"mean", {F({3, 4})}, [](L in) { return mean(in[0]); }},
      {"mean_dim", {F({3, 4})}, [](L in) { return mean(in[0], {0}); }},
      {"mean_dims_keepdim",
       {F({2, 3, 4})},
       [](L in) {
         return mean(in[0], {-1, 1}, true);
       }},
      {"max_all", {F({3, 4})}, [](L in) { return max(in[0]); }},
      {"min_all", {F({3, 4})}, [](L in) { return min(in[0]); }},
      {"max_dim", {F({3, 4})}, [](L in) { return std::get<0>(max(in[0], 1)); }},
      {"min_dim_keepdim",
       {F({3, 4})},
       [](L in) { return std::get<0>(min(in[0], 0, true)); }},
      // ---- linear algebra ----
      {"mm", {F({3, 4}), F({4, 2})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_transposed",
       {F({4, 3}), F({2, 4})},
       [](L in) { return mm(in[0].t(), in[1].t()); }},
      {"bmm", {F({2, 3, 4}), F({2, 4, 5})}, [](L in) { return bmm(in[0], in[1]); }},
      {"matmul_dot", {F({4}), F({4})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_mv", {F({3, 4}), F({4})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_vm", {F({4}), F({4, 3})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_batched",
       {F({2, 3, 4}), F({4, 5})},
       [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_broadcast",
       {F({2, 1, 3, 4}), F({3, 4, 2})},
       [](L in) { return matmul(in[0], in[1]); }},
      {"linear",
       {F({5, 4}), F({3, 4}), F({3})},
       [](L in) { return linear(in[0], in[1], in[2]); }},
      {"linear_no_bias",
       {F({5, 4}), F({3, 4})},
       [](L in) { return linear(in[0], in[1]); }},
      {"linear_3d",
       {F({2, 5, 4}), F({3, 4}), F({3})},
       [](L in) { return linear(in[0], in[1], in[2]); }},
      // ---- shape ----
      {"view",
       {F({3, 4})},
       [](L in) {
         return in[0].view({2, 6}) * 1;
       }},
      {"reshape", {F({3, 4})}, [](L in) { return in[0].t().reshape({12}); }},
      {"narrow", {F({4, 5})}, [](L in) { return narrow(in[0], 1, 1, 3); }},
      {"select", {F({4, 5})}, [](L in) { return select(in[0], 0, -2); }},
      {"chunk", {F({4, 7})}, [](L in) { return chunk(in[0], 3, 1)[2]; }},
      {"split",
       {F({5, 3})},
       [](L in) { return split(in[0], 2, 0)[1] * split(in[0], 2, 0)[0]; }},
      {"split_sizes",
       {F({6, 2})},
       [](L in) {
         return split(in[0], IntList{1, 5}, 0)[1];
       }},
      {"transpose", {F({2, 3, 4})}, [](L in) { return transpose(in[0], 0, 2); }},
      {"t", {F({3, 4})}, [](L in) { return t(in[0]); }},
      {"permute",
       {F({2, 3, 4})},
       [](L in) {
         return permute(in[0], {2, 0, 1});
       }},
      {"unsqueeze", {F({3, 4})}, [](L in) { return unsqueeze(in[0], 1); }},
      {"squeeze", {F({3, 1, 4, 1})}, [](L in) { return squeeze(in[0]); }},
      {"squeeze_dim", {F({3, 1, 4})}, [](L in) { return squeeze(in[0], 1); }},
      {"flatten", {F({2, 3, 4})}, [](L in) { return flatten(in[0], 1); }},
      {"expand",
       {F({3, 1})},
       [](L in) {
         return expand(in[0], {2, 3, 4});
       }},
      {"contiguous", {F({3, 4})}, [](L in) { return contiguous(in[0].t()); }},
      {"cat",
       {F({2, 3}), F({4, 3})},
       [](L in) {
         return cat({in[0], in[1]}, 0);
       }},
      {"cat_dim1",
       {F({2, 3}), F({2, 1}), F({2, 2})},
       [](L in) {
         return cat({in[0], in[1], in[2]}, -1);
       }},
      {"stack",
       {F({2, 3}), F({2, 3})},
       [](L in) {
         return stack({in[0], in[1]}, 1);
       }},
      // ---- indexing ----
      {"index_select",
       {F({5, 3}), I({4}, 5)},
       [](L in) { return index_select(in[0], 0, in[1]); }},
      {"index_select_dim1",
       {F({3, 5}), I({6}, 5)},
       [](L in) { return index_select(in[0], 1, in[1]); }},
      {"gather", {F({3, 5}), I({3, 4}, 5)}, [](L in) { return gather(in[0], 1, in[1]); }},
      {"scatter_add",
       {F({3, 5}), I({3, 4}, 5), F({3, 4})},
       [](L in) { return scatter_add(in[0], 1, in[1], in[2]); }},
      {"index_add",
       {F({5, 3}), I({4}, 5), F({4, 3})},
       [](L in) { return index_add(in[0], 0, in[1], in[2]); }},
      {"embedding",
       {F({6, 3}), I({2, 4}, 6)},
       [](L in) { return embedding(in[0], in[1]); }},
      // ---- convolution ----
      {"conv2d",
       {F({2, 3, 5, 5}), F({4, 3, 3, 3}), F({4})},
       [](L in) { return conv2d(in[0], in[1], in[2]); }},
      {"conv2d_stride_padding_nonsquare",
       {F({2, 2, 6, 5}), F({3, 2, 3, 2})},
       [](L in) {
         return conv2d(in[0], in[1], {}, {2, 1}, {1, 0});
       }},
      {"conv2d_dilation",
       {F({1, 2, 7, 7}), F({2, 2, 3, 3}), F({2})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 2, 2); }},
      {"conv2d_groups",
       {F({2, 4, 5, 5}), F({6, 2, 3, 3}), F({6})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 1, 1, /*groups=*/2); }},
      {"conv2d_depthwise_strided",
       {F({2, 3, 6, 6}), F({3, 1, 3, 3})},
       [](L in) { return conv2d(in[0], in[1], {}, 2, 1, 1, /*groups=*/3); }},
      {"conv2d_pointwise",
       {F({2, 3, 4, 4}), F({5, 3, 1, 1}), F({5})},
       [](L in) { return conv2d(in[0], in[1], in[2]); }},
      {"conv2d_unbatched",
       {F({2, 5, 5}), F({3, 2, 3, 3})},
       [](L in) { return conv2d(in[0], in[1], {}, 1, 1); }},
      {"conv_transpose2d",
       {F({2, 3, 3, 3}), F({3, 2, 3, 3}), F({2})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2]); }},
      {"conv_transpose2d_stride2_output_padding",
       {F({2, 2, 3, 3}), F({2, 3, 3, 3}), F({3})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1); }},
      {"conv_transpose2d_groups_dilation_nonsquare",
       {F({1, 4, 3, 4}), F({4, 2, 3, 2}), F({4})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
       }},
      {"conv_transpose2d_output_padding_over_stride",
       {F({1, 2, 3, 3}), F({2, 2, 2, 2})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], {}, 1, 0, /*output_padding=*/1, 1, 2);
       }},
      {"conv_transpose2d_from_1x1",
       {F({3, 4, 1, 1}), F({4, 2, 3, 2}), F({2})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2); }},
      {"conv_transpose2d_unbatched",
       {F({2, 3, 3}), F({2, 2, 2, 2})},
       [](L in) { return conv_transpose2d(in[0], in[1], {}, 2); }},
      {"conv_transpose1d",
       {F({2, 3, 4}), F({3, 2, 3}), F({2})},
       [](L in) { return conv_transpose1d(in[0], in[1], in[2], 2, 1, 1); }},
      {"conv_transpose1d_unbatched_groups_dilation",
       {F({4, 5}), F({4, 1, 2})},
       [](L in) { return conv_transpose1d(in[0], in[1], {}, 1, 1, 0, 2, 2); }},
      // ---- pooling ----
      {"max_pool2d", {F({2, 3, 6, 6})}, [](L in) { return max_pool2d(in[0], 2); }},
      {"max_pool2d_overlap_padding",
       {F({1, 2, 7, 6})},
       [](L in) { return max_pool2d(in[0], 3, 2, 1); }},
      {"max_pool2d_dilation_ceil_mode",
       {F({1, 2, 8, 7})},
       [](L in) {
         return max_pool2d(in[0], {3, 2}, 2, 1, {2, 1}, /*ceil_mode=*/true);
       }},
      {"max_pool2d_unbatched",
       {F({2, 5, 5})},
       [](L in) { return max_pool2d(in[0], 2, 1); }},
      {"avg_pool2d", {F({2, 3, 6, 6})}, [](L in) { return avg_pool2d(in[0], 2); }},
      {"avg_pool2d_padding_exclude_pad",
       {F({1, 2, 7, 6})},
       [](L in) {
         return avg_pool2d(in[0], 3, 2, 1, false, /*count_include_pad=*/false);
       }},
      {"avg_pool2d_ceil_mode_include_pad",
       {F({1, 2, 7, 6})},
       [](L in) {
         return avg_pool2d(in[0], {3, 2}, 2, 1, /*ceil_mode=*/true);
       }},
      {"avg_pool2d_divisor_override",
       {F({1, 2, 5, 5})},
       [](L in) {
         return avg_pool2d(in[0], 2, 1, 0, false, true, /*divisor_override=*/3);
       }},
      // ---- 1-D convolution and pooling, adaptive pooling (issue 22) ----
      {"conv1d_stride_padding_groups",
       {F({2, 4, 7}), F({6, 2, 3}), F({6})},
       [](L in) { return conv1d(in[0], in[1], in[2], 2, 1, 1, /*groups=*/2); }},
      {"conv1d_dilation_unbatched",
       {F({3, 8}), F({2, 3, 3})},
       [](L in) { return conv1d(in[0], in[1], {}, 1, 2, /*dilation=*/2); }},
      {"max_pool1d_overlap_padding",
       {F({2, 3, 9})},
       [](L in) { return max_pool1d(in[0], 3, 2, 1); }},
      {"max_pool1d_dilation_ceil_mode_unbatched",
       {F({3, 8})},
       [](L in) {
         return max_pool1d(in[0], 2, 2, 0, /*dilation=*/2, /*ceil_mode=*/true);
       }},
      {"avg_pool1d_padding_exclude_pad",
       {F({2, 3, 7})},
       [](L in) {
         return avg_pool1d(in[0], 3, 2, 1, false, /*count_include_pad=*/false);
       }},
      {"avg_pool1d_ceil_mode",
       {F({2, 2, 7})},
       [](L in) { return avg_pool1d(in[0], 2, {}, 0, /*ceil_mode=*/true); }},
      {"adaptive_avg_pool2d_global",
       {F({2, 3, 5, 4})},
       [](L in) { return adaptive_avg_pool2d(in[0], 1); }},
      {"adaptive_avg_pool2d_uneven",
       {F({2, 2, 5, 7})},
       [](L in) {
         return adaptive_avg_pool2d(in[0], {3, 4});
       }},
      {"adaptive_avg_pool2d_divisible_unbatched",
       {F({2, 6, 4})},
       [](L in) {
         return adaptive_avg_pool2d(in[0], {3, 2});
       }},
      {"adaptive_max_pool2d_global",
       {F({2, 3, 4, 5})},
       [](L in) { return adaptive_max_pool2d(in[0], 1); }},
      {"adaptive_max_pool2d_uneven",
       {F({2, 2, 5, 7})},
       [](L in) {
         return adaptive_max_pool2d(in[0], {3, 4});
       }},
      {"adaptive_max_pool2d_upsampling_unbatched",
       {F({2, 3, 2})},
       [](L in) {
         return adaptive_max_pool2d(in[0], {4, 3});
       }},
      // ---- resampling and channel dropout (issue 22) ----
      {"upsample_nearest2d_size",
       {F({2, 3, 3, 4})},
       [](L in) {
         return upsample_nearest2d(in[0], {5, 9});
       }},
      {"upsample_nearest2d_scale",
       {F({1, 2, 3, 3})},
       [](L in) {
         return upsample_nearest2d(in[0], {7, 6}, 2.5, 2.0);
       }},
      {"upsample_bilinear2d",
       {F({2, 2, 3, 4})},
       [](L in) {
         return upsample_bilinear2d(in[0], {5, 7}, /*align_corners=*/false);
       }},
      {"upsample_bilinear2d_align_corners",
       {F({1, 2, 3, 4})},
       [](L in) {
         return upsample_bilinear2d(in[0], {6, 7}, /*align_corners=*/true);
       }},
      {"upsample_bilinear2d_scale_down",
       {F({1, 2, 6, 5})},
       [](L in) {
         return upsample_bilinear2d(in[0], {4, 2}, false, 0.75, 0.5);
       }},
      {"dropout2d_eval",
       {F({2, 3, 2, 2})},
       [](L in) { return dropout2d(in[0], 0.5, false); }},
      // ---- normalisation ----
      {"batch_norm_train",
       {F({4, 3, 3, 3}), F({3}), F({3})},
       [](L in) { return batch_norm(in[0], {}, {}, in[1], in[2], /*training=*/true); }},
      {"batch_norm_train_running_stats_2d",
       {F({5, 4}), F({4}), F({4})},
       [](L in) {
         Tensor mean = zeros_like(in[1].detach()), var = ones_like(in[1].detach());
         return batch_norm(in[0], mean, var, in[1], in[2], /*training=*/true);
       }},
      {"batch_norm_train_no_affine",
       {F({3, 2, 4})},
       [](L in) { return batch_norm(in[0], {}, {}, {}, {}, /*training=*/true); }},
      {"batch_norm_eval",
       {F({4, 3, 2, 2}), F({3}), F({3}), W({3}), W({3})},
       [](L in) { return batch_norm(in[0], in[3], in[4], in[1], in[2]); }},
      {"layer_norm_last_dim",
       {F({3, 5}), F({5}), F({5})},
       [](L in) { return layer_norm(in[0], {5}, in[1], in[2]); }},
      {"layer_norm_last_two_dims",
       {F({2, 3, 4}), F({3, 4}), F({3, 4})},
       [](L in) {
         return layer_norm(in[0], {3, 4}, in[1], in[2]);
       }},
      {"layer_norm_no_affine", {F({4, 6})}, [](L in) { return layer_norm(in[0], {6}); }},
      {"group_norm",
       {F({3, 6, 4}), F({6}), F({6})},
       [](L in) { return group_norm(in[0], 3, in[1], in[2]); }},
      {"group_norm_no_affine_4d",
       {F({2, 4, 3, 3})},
       [](L in) { return group_norm(in[0], 2); }},
      {"instance_norm_affine",
       {F({2, 3, 3, 4}), F({3}), F({3})},
       [](L in) { return instance_norm(in[0], {}, {}, in[1], in[2]); }},
      {"instance_norm_running_stats",
       {F({2, 3, 4, 3})},
       [](L in) {
         const Tensor c = in[0].detach();
         Tensor mean = zeros({3}, c.options()), var = ones({3}, c.options());
         return instance_norm(in[0], mean, var, {}, {}, /*use_input_stats=*/true);
       }},
      {"instance_norm_eval",
       {F({2, 3, 2, 2}), F({3}), F({3}), W({3}), W({3})},
       [](L in) {
         return instance_norm(
             in[0], in[3], in[4], in[1], in[2], /*use_input_stats=*/false);
       }},
      // ---- losses ----
      {"mse_loss_mean",
       {F({3, 4}), F({3, 4})},
       [](L in) { return mse_loss(in[0], in[1]); }},
      {"mse_loss_sum",
       {F({3, 4}), F({3, 4})},
       [](L in) { return mse_loss(in[0], in[1], kSum); }},
      {"mse_loss_none",
       {F({3, 4}), F({3, 4})},
       [](L in) { return mse_loss(in[0], in[1], kNone); }},
      {"nll_loss_mean",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return nll_loss(in[0], in[1]); }},
      {"nll_loss_sum",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return nll_loss(in[0], in[1], {}, kSum); }},
      {"nll_loss_none",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return nll_loss(in[0], in[1], {}, kNone); }},
      {"nll_loss_weight_ignore",
       {F({6, 4}), I({6}, 4), W({4})},
       [](L in) { return nll_loss(in[0], in[1], in[2], kMean, /*ignore_index=*/1); }},
      {"cross_entropy_mean",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return cross_entropy(in[0], in[1]); }},
      {"cross_entropy_sum",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kSum); }},
      {"cross_entropy_none",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kNone); }},
      {"cross_entropy_weight_ignore",
       {F({6, 4}), I({6}, 4), W({4})},
       [](L in) { return cross_entropy(in[0], in[1], in[2], kMean, 1); }},
      {"cross_entropy_label_smoothing",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kMean, -100, 0.1); }},
      {"bce_mean",
       {U({3, 4}), U({3, 4})},
       [](L in) { return binary_cross_entropy(in[0], in[1]); }},
      {"bce_weight_none",
       {U({3, 4}), U({3, 4}), W({4})},
       [](L in) { return binary_cross_entropy(in[0], in[1], in[2], kNone); }},
      {"bce_with_logits_mean",
       {F({3, 4}), U({3, 4})},
       [](L in) { return binary_cross_entropy_with_logits(in[0], in[1]); }},
      {"bce_with_logits_weights_sum",
       {F({3, 4}), U({3, 4}), W({3, 1}), W({4})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], in[1], in[2], in[3], kSum);
       }},
      {"bce_with_logits_pos_weight_grad",
       {F({3, 4}), U({3, 4}), P({4})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], in[1], {}, in[2], kNone);
       }},
      {"l1_loss", {F({3, 4}), F({3, 4})}, [](L in) { return l1_loss(in[0], in[1]); }},
      {"smooth_l1_loss",
       {F({3, 4}), F({3, 4})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kSum, 0.8); }},
      {"smooth_l1_loss_beta0",
       {F({3, 4}), F({3, 4})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kNone, 0.0); }},
      {"huber_loss",
       {F({3, 4}), F({3, 4})},
       [](L in) { return huber_loss(in[0], in[1], kMean, 0.6); }},
      {"kl_div_batchmean",
       {F({3, 4}), U({3, 4})},
       [](L in) { return kl_div(in[0], in[1], kBatchMean); }},
      {"kl_div_log_target_none",
       {F({3, 4}), F({3, 4})},
       [](L in) { return kl_div(in[0], in[1], kNone, /*log_target=*/true); }},
      {"cosine_embedding_loss",
       {F({5, 3}), F({5, 3})},
       [](L in) { return cosine_embedding_loss(in[0], in[1], labels(in[0]), -0.3); }},
      {"cosine_embedding_loss_1d",
       {F({4}), F({4})},
       [](L in) {
         return cosine_embedding_loss(
             in[0], in[1], labels(in[0], /*scalar=*/true), 0.0, kSum);
       }},
      {"margin_ranking_loss",
       {F({5}), F({5})},
       [](L in) { return margin_ranking_loss(in[0], in[1], labels(in[0]), 0.4, kNone); }},
      // ---- recurrent (no double backward, as PyTorch's cuDNN RNN) ----
      {"lstm_cell",
       {F({3, 4}), F({3, 5}), F({3, 5}), F({20, 4}), F({20, 5}), F({20}), F({20})},
       [](L in) {
         auto [h, c] = lstm_cell(in[0], {in[1], in[2]}, in[3], in[4], in[5], in[6]);
         return cat({h, c}, 1);
       },
       false},
      {"gru_cell",
       {F({3, 4}), F({3, 5}), F({15, 4}), F({15, 5}), F({15}), F({15})},
       [](L in) { return gru_cell(in[0], in[1], in[2], in[3], in[4], in[5]); },
       false},
      {"lstm_bidirectional_batch_first",
       {F({2, 4, 3}), F({16, 3}), F({16, 4}), F({16, 3}), F({16, 4})},
       [](L in) {
         const tensor_list params(in.begin() + 1, in.end());
         return std::get<0>(lstm(in[0], {}, params, false, 1, 0.0, true, true, true));
       },
       false},
  };
}

}  // namespace tandem::testing::op_table
