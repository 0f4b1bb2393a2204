// Every differentiable op of tandem/ops (elementwise, activations, softmax,
// reductions, matrix products, shape ops, indexing, losses) on the device
// under test, in float32 and float64: the output and every input's gradient
// equal the float64 CPU reference. Rows stress what GPU kernels get wrong:
// broadcasting (stride-0 operands), transposed and narrowed views, size-0 and
// size-1 dims, and sizes that span many blocks (1M elements, 4097-wide rows).
// Layers (conv, pooling, normalisation) are in layer_gradient_test.cpp.
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::CudaOpCaseTest;
using testing::F;
using testing::I;
using testing::OpCase;
using testing::P;
using testing::W;
using L = const std::vector<Tensor>&;

constexpr int64_t kMillion = 1 << 20;

std::vector<OpCase> elementwise_cases() {
  return {
      {"add", {F({33, 65}), F({33, 65})}, [](L in) { return in[0] + in[1]; }},
      {"add_broadcast_alpha",
       {F({5, 1, 7}), F({3, 1})},
       [](L in) { return add(in[0], in[1], 0.5); }},
      {"add_transposed",
       {F({65, 33}), F({33, 65})},
       [](L in) { return in[0].t() + in[1]; }},
      {"add_zero_dim", {F({4, 5}), F({})}, [](L in) { return in[0] + in[1]; }},
      {"add_scalar_alpha", {F({9})}, [](L in) { return add(in[0], 1.5, 2); }},
      {"sub_broadcast_alpha",
       {F({2, 3}), F({3})},
       [](L in) { return sub(in[0], in[1], 2); }},
      {"rsub_scalar", {F({9})}, [](L in) { return 3 - in[0]; }},
      {"mul_million", {F({kMillion}), F({kMillion})}, [](L in) { return in[0] * in[1]; }},
      {"mul_broadcast_both",
       {F({4, 1, 3}), F({2, 1})},
       [](L in) { return in[0] * in[1]; }},
      {"mul_empty", {F({0, 3}), F({3})}, [](L in) { return in[0] * in[1]; }},
      {"mul_size_one_dims",
       {F({1, 7, 1}), F({1, 1, 1})},
       [](L in) { return in[0] * in[1]; }},
      {"mul_scalar", {F({9})}, [](L in) { return in[0] * -1.5; }},
      {"div", {F({7, 9}), P({7, 9})}, [](L in) { return in[0] / in[1]; }},
      {"div_transposed_broadcast",
       {F({9, 7}), P({9, 1})},
       [](L in) { return in[0].t() / in[1].t(); }},
      {"div_scalar", {F({9})}, [](L in) { return in[0] / 3; }},
      {"rdiv_scalar", {P({9})}, [](L in) { return 2 / in[0]; }},
      {"pow_tensor", {P({5, 6}), F({5, 6})}, [](L in) { return pow(in[0], in[1]); }},
      {"pow_broadcast", {P({5, 6}), F({6})}, [](L in) { return pow(in[0], in[1]); }},
      {"pow_scalar", {F({33})}, [](L in) { return pow(in[0], 3); }},
      {"pow_square", {F({33})}, [](L in) { return pow(in[0], 2); }},
      {"pow_fractional", {P({33})}, [](L in) { return pow(in[0], -1.5); }},
      {"pow_scalar_base", {F({33})}, [](L in) { return pow(1.5, in[0]); }},
      {"maximum", {F({3, 4}), F({4})}, [](L in) { return maximum(in[0], in[1]); }},
      {"minimum", {F({3, 4}), F({3, 1})}, [](L in) { return minimum(in[0], in[1]); }},
      {"neg", {F({37, 129})}, [](L in) { return neg(in[0]); }},
      {"exp", {F({37, 129})}, [](L in) { return exp(in[0]); }},
      {"exp_million", {F({kMillion})}, [](L in) { return exp(in[0]); }},
      {"exp_expanded",
       {F({5, 1})},
       [](L in) {
         return exp(in[0].expand({4, 5, 6}));
       }},
      {"exp_transposed", {F({129, 37})}, [](L in) { return exp(in[0].t()); }},
      {"log", {P({37, 129})}, [](L in) { return log(in[0]); }},
      {"sqrt", {P({37, 129})}, [](L in) { return sqrt(in[0]); }},
      {"rsqrt", {P({37, 129})}, [](L in) { return rsqrt(in[0]); }},
      {"abs", {F({37, 129})}, [](L in) { return abs(in[0]); }},
      {"sign", {F({37, 129})}, [](L in) { return sign(in[0]) * in[0]; }},
      {"square", {F({37, 129})}, [](L in) { return square(in[0]); }},
      {"reciprocal", {P({37, 129})}, [](L in) { return reciprocal(in[0]); }},
      {"clamp", {F({37, 129})}, [](L in) { return clamp(in[0], -1, 1); }},
      {"clamp_min", {F({37, 129})}, [](L in) { return clamp_min(in[0], 0.3); }},
      {"clamp_max", {F({37, 129})}, [](L in) { return clamp_max(in[0], -0.3); }},
      {"clamp_upper_only",
       {F({37, 129})},
       [](L in) { return clamp(in[0], std::nullopt, 0.5); }},
      {"where_broadcast",
       {F({3, 4}), F({4})},
       [](L in) { return where(in[0] > 0, in[0], in[1]); }},
      {"where_transposed",
       {F({65, 33}), F({33, 65})},
       [](L in) { return where(in[1] < 0.5, in[0].t(), in[1]); }},
      // ---- in place on non-leaves ----
      {"add_inplace_transposed_operand",
       {F({6, 4}), F({4, 6})},
       [](L in) { return (in[0] * 1).add_(in[1].t(), 0.5); }},
      {"mul_div_inplace",
       {F({5, 3}), F({5, 3}), P({3})},
       [](L in) { return (in[0] * 1).mul_(in[1]).div_(in[2]); }},
      {"scalar_inplace",
       {F({33})},
       [](L in) { return (in[0] * 1).mul_(3).add_(1).sub_(0.5).div_(2); }},
      {"clamp_relu_inplace",
       {F({33})},
       [](L in) { return (in[0] * 1).clamp_(-1, 0.5).relu_(); }},
      {"copy_inplace_broadcast",
       {F({4, 3}), F({3})},
       [](L in) { return (in[0] * 1).copy_(in[1]) * in[0]; }},
      {"clone", {F({3, 2})}, [](L in) { return in[0].clone() * in[0]; }},
      {"to_other_dtype_and_back",
       {F({17})},
       [](L in) {
         const ScalarType other = in[0].dtype() == kFloat32 ? kFloat64 : kFloat32;
         return (in[0].to(other) * 2).to(in[0].dtype());
       }},
      {"through_the_cpu_and_back",
       {F({3, 5})},
       [](L in) { return (in[0].to(kCPU) * in[0].to(kCPU)).to(in[0].device()) + in[0]; }},
      // ---- activations ----
      {"relu", {F({37, 129})}, [](L in) { return relu(in[0]); }},
      {"relu_million", {F({kMillion})}, [](L in) { return relu(in[0]); }},
      {"gelu", {F({37, 129})}, [](L in) { return gelu(in[0]); }},
      {"gelu_tanh", {F({37, 129})}, [](L in) { return gelu(in[0], "tanh"); }},
      {"sigmoid", {F({37, 129})}, [](L in) { return sigmoid(in[0]); }},
      {"tanh", {F({37, 129})}, [](L in) { return tanh(in[0]); }},
      {"leaky_relu", {F({37, 129})}, [](L in) { return leaky_relu(in[0], 0.2); }},
      {"leaky_relu_million", {F({kMillion})}, [](L in) { return leaky_relu(in[0]); }},
      {"elu", {F({37, 129})}, [](L in) { return elu(in[0], 0.7); }},
      {"selu", {F({37, 129})}, [](L in) { return selu(in[0]); }},
      {"silu", {F({37, 129})}, [](L in) { return silu(in[0]); }},
      {"mish_transposed", {F({129, 37})}, [](L in) { return mish(in[0].t()); }},
      {"softplus", {F({37, 129})}, [](L in) { return softplus(in[0], 2.0, 1.5); }},
      {"hardtanh", {F({37, 129})}, [](L in) { return hardtanh(in[0], -0.7, 1.2); }},
      {"log_sigmoid_broadcast",
       {F({37, 1})},
       [](L in) {
         return log_sigmoid(in[0].expand({37, 129}));
       }},
      {"softsign", {F({37, 129})}, [](L in) { return softsign(in[0]); }},
      {"prelu", {F({8, 16, 9}), F({16})}, [](L in) { return prelu(in[0], in[1]); }},
      {"dropout_eval", {F({3, 4})}, [](L in) { return dropout(in[0], 0.5, false); }},
  };
}

std::vector<OpCase> softmax_and_reduction_cases() {
  return {
      {"softmax_4097_wide", {F({64, 4097})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_dim0_long", {F({4097, 3})}, [](L in) { return softmax(in[0], 0); }},
      {"softmax_3d_middle", {F({4, 33, 5})}, [](L in) { return softmax(in[0], -2); }},
      {"softmax_3d_first", {F({5, 4, 3})}, [](L in) { return softmax(in[0], 0); }},
      {"softmax_one_column", {F({7, 1})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_no_rows", {F({0, 5})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_transposed", {F({9, 17})}, [](L in) { return softmax(in[0].t(), 1); }},
      {"softmax_large_logits",
       {F({16, 1000})},
       [](L in) { return softmax(in[0] * 50, 1); }},
      {"log_softmax_4097_wide",
       {F({64, 4097})},
       [](L in) { return log_softmax(in[0], -1); }},
      {"log_softmax_dim0", {F({33, 17})}, [](L in) { return log_softmax(in[0], 0); }},
      {"log_softmax_3d_last",
       {F({3, 4, 1500})},
       [](L in) { return log_softmax(in[0], 2); }},
      {"log_softmax_large_logits",
       {F({16, 1000})},
       [](L in) { return log_softmax(in[0] * 50, 1); }},
      // ---- reductions (positive inputs for the 1M-element ones, so the
      // result is not a cancellation that float32 cannot resolve) ----
      {"sum_all", {F({37, 129})}, [](L in) { return sum(in[0]); }},
      {"sum_all_million", {P({kMillion})}, [](L in) { return sum(in[0]); }},
      {"sum_all_transposed", {F({129, 37})}, [](L in) { return sum(in[0].t()); }},
      {"sum_empty", {F({0, 4})}, [](L in) { return sum(in[0]); }},
      {"sum_one_element", {F({1})}, [](L in) { return sum(in[0]); }},
      {"sum_dim0_tall", {F({4096, 256})}, [](L in) { return sum(in[0], {0}); }},
      {"sum_dim1_wide", {F({256, 4096})}, [](L in) { return sum(in[0], {1}); }},
      {"sum_dims_keepdim",
       {F({13, 257, 9})},
       [](L in) {
         return sum(in[0], {0, 2}, true);
       }},
      {"sum_middle_dim", {F({13, 257, 9})}, [](L in) { return sum(in[0], {1}); }},
      {"sum_dim_of_empty", {F({0, 4})}, [](L in) { return sum(in[0], {0}); }},
      {"mean_all_million", {P({kMillion})}, [](L in) { return mean(in[0]); }},
      {"mean_dim", {F({37, 129})}, [](L in) { return mean(in[0], {0}); }},
      {"mean_dims_keepdim",
       {F({6, 7, 8})},
       [](L in) {
         return mean(in[0], {-1, 1}, true);
       }},
      {"max_all", {F({37, 129})}, [](L in) { return max(in[0]); }},
      {"max_all_million", {F({kMillion})}, [](L in) { return max(in[0]); }},
      {"min_all", {F({37, 129})}, [](L in) { return min(in[0]); }},
      {"max_dim_wide", {F({64, 4097})}, [](L in) { return std::get<0>(max(in[0], 1)); }},
      {"max_dim0", {F({1000, 33})}, [](L in) { return std::get<0>(max(in[0], 0)); }},
      {"min_dim_keepdim",
       {F({5, 6, 7})},
       [](L in) { return std::get<0>(min(in[0], 1, true)); }},
  };
}

std::vector<OpCase> linalg_and_shape_cases() {
  return {
      {"mm", {F({129, 257}), F({257, 65})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_both_transposed",
       {F({257, 129}), F({65, 257})},
       [](L in) { return mm(in[0].t(), in[1].t()); }},
      {"mm_narrowed_columns",
       {F({50, 64}), F({40, 30})},
       [](L in) { return mm(in[0].narrow(1, 3, 40), in[1]); }},
      {"mm_k_zero", {F({3, 0}), F({0, 4})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_no_rows", {F({0, 5}), F({5, 3})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_one_by_one", {F({1, 1}), F({1, 1})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_long_k", {F({8, 4097}), F({4097, 8})}, [](L in) { return mm(in[0], in[1]); }},
      {"bmm", {F({7, 33, 17}), F({7, 17, 9})}, [](L in) { return bmm(in[0], in[1]); }},
      {"bmm_transposed",
       {F({7, 17, 33}), F({7, 9, 17})},
       [](L in) { return bmm(in[0].transpose(1, 2), in[1].transpose(1, 2)); }},
      {"matmul_dot", {F({300}), F({300})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_mv", {F({30, 40}), F({40})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_vm", {F({40}), F({40, 30})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_batched",
       {F({3, 20, 40}), F({40, 10})},
       [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_broadcast",
       {F({2, 1, 3, 4}), F({3, 4, 2})},
       [](L in) { return matmul(in[0], in[1]); }},
      {"linear",
       {F({64, 300}), F({100, 300}), F({100})},
       [](L in) { return linear(in[0], in[1], in[2]); }},
      {"linear_no_bias",
       {F({5, 4}), F({3, 4})},
       [](L in) { return linear(in[0], in[1]); }},
      {"linear_3d",
       {F({2, 5, 4}), F({3, 4}), F({3})},
       [](L in) { return linear(in[0], in[1], in[2]); }},
      // ---- shape ----
      {"narrow_select",
       {F({40, 50})},
       [](L in) { return narrow(in[0], 1, 7, 30).select(0, 3); }},
      {"chunk_uneven", {F({4, 7})}, [](L in) { return chunk(in[0], 3, 1)[2]; }},
      {"split_sizes",
       {F({6, 2})},
       [](L in) {
         return split(in[0], IntList{1, 5}, 0)[1];
       }},
      {"permute_contiguous",
       {F({6, 7, 8})},
       [](L in) {
         return contiguous(permute(in[0], {2, 0, 1}));
       }},
      {"reshape_transposed", {F({30, 40})}, [](L in) { return in[0].t().reshape({-1}); }},
      {"expand_contiguous",
       {F({3, 1})},
       [](L in) {
         return expand(in[0], {2, 3, 4}) * 1;
       }},
      {"squeeze_unsqueeze_flatten",
       {F({3, 1, 4, 1})},
       [](L in) { return flatten(unsqueeze(squeeze(in[0]), 0)); }},
      {"cat_dim0",
       {F({20, 3}), F({40, 3})},
       [](L in) {
         return cat({in[0], in[1]}, 0);
       }},
      {"cat_last_dim_transposed",
       {F({3, 20}), F({20, 1}), F({20, 2})},
       [](L in) {
         return cat({in[0].t(), in[1], in[2]}, -1);
       }},
      {"cat_with_empty",
       {F({2, 3}), F({0, 3}), F({1, 3})},
       [](L in) {
         return cat({in[0], in[1], in[2]}, 0);
       }},
      {"stack_dim2",
       {F({5, 3}), F({5, 3})},
       [](L in) {
         return stack({in[0], in[1]}, 2);
       }},
      // ---- indexing (index values repeat: accumulation must add them all) ----
      {"index_select_dim0",
       {F({1000, 33}), I({517}, 1000)},
       [](L in) { return index_select(in[0], 0, in[1]); }},
      {"index_select_dim1_repeats",
       {F({33, 10}), I({300}, 10)},
       [](L in) { return index_select(in[0], 1, in[1]); }},
      {"index_select_empty_index",
       {F({5, 3}), I({0}, 5)},
       [](L in) { return index_select(in[0], 0, in[1]); }},
      {"gather_dim1",
       {F({30, 50}), I({30, 70}, 50)},
       [](L in) { return gather(in[0], 1, in[1]); }},
      {"gather_dim0_3d",
       {F({6, 5, 4}), I({9, 5, 4}, 6)},
       [](L in) { return gather(in[0], 0, in[1]); }},
      {"scatter_add_repeats",
       {F({8, 5}), I({8, 300}, 5), F({8, 300})},
       [](L in) { return scatter_add(in[0], 1, in[1], in[2]); }},
      {"scatter_add_dim0",
       {F({4, 6}), I({50, 6}, 4), F({50, 6})},
       [](L in) { return scatter_add(in[0], 0, in[1], in[2]); }},
      {"scatter_add_inplace",
       {F({3, 5}), I({3, 4}, 5), F({3, 4})},
       [](L in) { return (in[0] * 1).scatter_add_(1, in[1], in[2]); }},
      {"index_add_repeats",
       {F({10, 33}), I({1000}, 10), F({1000, 33})},
       [](L in) { return index_add(in[0], 0, in[1], in[2]); }},
      {"index_add_dim1",
       {F({5, 6}), I({20}, 6), F({5, 20})},
       [](L in) { return index_add(in[0], 1, in[1], in[2]); }},
      {"embedding",
       {F({1000, 64}), I({32, 40}, 1000)},
       [](L in) { return embedding(in[0], in[1]); }},
      {"embedding_small_vocab_padding",
       {F({10, 16}), I({64, 50}, 10)},
       [](L in) { return embedding(in[0], in[1], /*padding_idx=*/3); }},
  };
}

std::vector<OpCase> loss_cases() {
  return {
      {"bce_with_logits_pos_weight",
       {F({64, 10}), F({64, 10}), W({10})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], sigmoid(in[1]), {}, in[2]);
       }},
      {"bce_weight_sum",
       {F({64, 10}), F({64, 10}), W({10})},
       [](L in) {
         return binary_cross_entropy(sigmoid(in[0]), sigmoid(in[1]), in[2], kSum);
       }},
      {"smooth_l1_loss_none",
       {F({64, 10}), F({64, 10})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kNone, 0.5); }},
      {"huber_loss",
       {F({64, 10}), F({64, 10})},
       [](L in) { return huber_loss(in[0], in[1]); }},
      {"kl_div_batchmean",
       {F({64, 10}), F({64, 10})},
       [](L in) { return kl_div(log_softmax(in[0], 1), softmax(in[1], 1), kBatchMean); }},
      {"mse_loss_mean",
       {F({64, 10}), F({64, 10})},
       [](L in) { return mse_loss(in[0], in[1]); }},
      {"mse_loss_sum",
       {F({64, 10}), F({64, 10})},
       [](L in) { return mse_loss(in[0], in[1], kSum); }},
      {"mse_loss_none_broadcast",
       {F({64, 10}), F({10})},
       [](L in) {
         return mse_loss(in[0], in[1].expand({64, 10}), kNone);
       }},
      {"nll_loss_mean",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return nll_loss(in[0], in[1]); }},
      {"nll_loss_sum_weight",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return nll_loss(in[0], in[1], in[2], kSum); }},
      {"nll_loss_none_ignore",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return nll_loss(in[0], in[1], {}, kNone, /*ignore_index=*/2); }},
      {"nll_loss_weight_ignore_mean",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return nll_loss(in[0], in[1], in[2], kMean, /*ignore_index=*/1); }},
      {"cross_entropy_1000_classes",
       {F({512, 1000}), I({512}, 1000)},
       [](L in) { return cross_entropy(in[0], in[1]); }},
      {"cross_entropy_sum",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kSum); }},
      {"cross_entropy_none",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kNone); }},
      {"cross_entropy_weight_ignore",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return cross_entropy(in[0], in[1], in[2], kMean, 1); }},
      {"cross_entropy_label_smoothing",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kMean, -100, 0.1); }},
      {"cross_entropy_smoothing_weight_ignore_sum",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return cross_entropy(in[0], in[1], in[2], kSum, 4, 0.2); }},
      {"cross_entropy_smoothing_none_4097",
       {F({16, 4097}), I({16}, 4097)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kNone, -100, 0.05); }},
  };
}

class CudaOpGradients : public CudaOpCaseTest {};

TEST_P(CudaOpGradients, Float32MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat32);
}

TEST_P(CudaOpGradients, Float64MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat64);
}

INSTANTIATE_TEST_SUITE_P(Elementwise,
                         CudaOpGradients,
                         ::testing::ValuesIn(elementwise_cases()),
                         testing::case_name);
INSTANTIATE_TEST_SUITE_P(SoftmaxAndReductions,
                         CudaOpGradients,
                         ::testing::ValuesIn(softmax_and_reduction_cases()),
                         testing::case_name);
INSTANTIATE_TEST_SUITE_P(LinalgAndShape,
                         CudaOpGradients,
                         ::testing::ValuesIn(linalg_and_shape_cases()),
                         testing::case_name);
INSTANTIATE_TEST_SUITE_P(Losses,
                         CudaOpGradients,
                         ::testing::ValuesIn(loss_cases()),
                         testing::case_name);

}  // namespace
}  // namespace tandem
