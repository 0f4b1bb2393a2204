// Convolution, pooling and normalisation on the device under test, in
// float32 and float64: the output and every input's gradient equal the
// float64 CPU reference. Rows cover stride, padding, dilation, groups
// (depthwise included), bias or none, unbatched input, ceil_mode,
// count_include_pad, divisor_override, training and evaluation statistics,
// and sizes large enough for many blocks per plane or channel.
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::CudaOpCaseTest;
using testing::F;
using testing::OpCase;
using testing::W;
using L = const std::vector<Tensor>&;

// cuDNN may pick any algorithm (FFT and Winograd ones round differently):
// convolutions get ten times the float32 tolerance.
constexpr double kConvLoosen = 10;

std::vector<OpCase> conv_cases() {
  return {
      {"conv2d",
       {F({2, 3, 5, 5}), F({4, 3, 3, 3}), F({4})},
       [](L in) { return conv2d(in[0], in[1], in[2]); },
       kConvLoosen},
      {"conv2d_wide_padded",
       {F({8, 16, 32, 32}), F({32, 16, 3, 3}), F({32})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 1); },
       kConvLoosen},
      {"conv2d_stride_padding_nonsquare",
       {F({2, 2, 6, 5}), F({3, 2, 3, 2})},
       [](L in) {
         return conv2d(in[0], in[1], {}, {2, 1}, {1, 0});
       },
       kConvLoosen},
      {"conv2d_5x5_stride2",
       {F({4, 3, 28, 28}), F({6, 3, 5, 5}), F({6})},
       [](L in) { return conv2d(in[0], in[1], in[2], 2, 2); },
       kConvLoosen},
      {"conv2d_dilation",
       {F({1, 2, 7, 7}), F({2, 2, 3, 3}), F({2})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 2, 2); },
       kConvLoosen},
      {"conv2d_groups",
       {F({2, 4, 5, 5}), F({6, 2, 3, 3}), F({6})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 1, 1, /*groups=*/2); },
       kConvLoosen},
      {"conv2d_depthwise_strided",
       {F({2, 8, 16, 16}), F({8, 1, 3, 3})},
       [](L in) { return conv2d(in[0], in[1], {}, 2, 1, 1, /*groups=*/8); },
       kConvLoosen},
      {"conv2d_pointwise",
       {F({4, 16, 7, 7}), F({8, 16, 1, 1}), F({8})},
       [](L in) { return conv2d(in[0], in[1], in[2]); },
       kConvLoosen},
      {"conv2d_unbatched",
       {F({2, 5, 5}), F({3, 2, 3, 3})},
       [](L in) { return conv2d(in[0], in[1], {}, 1, 1); },
       kConvLoosen},
      {"conv_transpose2d_dcgan_upsample",
       {F({4, 16, 8, 8}), F({16, 8, 4, 4}), F({8})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1); },
       kConvLoosen},
      {"conv_transpose2d_from_1x1",
       {F({4, 20, 1, 1}), F({20, 16, 4, 4})},
       [](L in) { return conv_transpose2d(in[0], in[1]); },
       kConvLoosen},
      {"conv_transpose2d_groups_dilation_output_padding",
       {F({2, 4, 5, 6}), F({4, 3, 3, 2}), F({6})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], in[2], {2, 3}, 1, {1, 2}, 2, {1, 2});
       },
       kConvLoosen},
      {"conv_transpose1d_strided",
       {F({3, 6, 9}), F({6, 4, 5}), F({4})},
       [](L in) { return conv_transpose1d(in[0], in[1], in[2], 2, 2, 1); },
       kConvLoosen},
      {"conv2d_transposed_input",
       {F({2, 3, 9, 6}), F({4, 3, 3, 3}), F({4})},
       [](L in) { return conv2d(in[0].transpose(2, 3), in[1], in[2], 1, 1); },
       kConvLoosen},
      {"conv2d_single_pixel_output",
       {F({3, 4, 3, 3}), F({5, 4, 3, 3}), F({5})},
       [](L in) { return conv2d(in[0], in[1], in[2]); },
       kConvLoosen},
  };
}

std::vector<OpCase> pooling_cases() {
  return {
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
      {"max_pool2d_large_ceil_mode",
       {F({8, 16, 33, 31})},
       [](L in) { return max_pool2d(in[0], 3, 2, 1, 1, /*ceil_mode=*/true); }},
      {"max_pool2d_indices_as_values",
       {F({2, 3, 9, 8})},
       [](L in) {
         auto [values, indices] = max_pool2d_with_indices(in[0], 3, 2, 1);
         return values + indices.to(values.dtype()) * 1e-3;
       }},
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
      {"avg_pool2d_large_ceil_exclude_pad",
       {F({8, 16, 33, 31})},
       [](L in) { return avg_pool2d(in[0], 3, 2, 1, /*ceil_mode=*/true, false); }},
      {"avg_pool2d_unbatched", {F({3, 8, 8})}, [](L in) { return avg_pool2d(in[0], 4); }},
  };
}

std::vector<OpCase> normalization_cases() {
  return {
      {"batch_norm_train",
       {F({4, 3, 3, 3}), F({3}), F({3})},
       [](L in) { return batch_norm(in[0], {}, {}, in[1], in[2], /*training=*/true); }},
      {"batch_norm_train_large",
       {F({32, 64, 14, 14}), F({64}), F({64})},
       [](L in) { return batch_norm(in[0], {}, {}, in[1], in[2], /*training=*/true); }},
      {"batch_norm_train_offset_mean",
       {F({16, 8, 10, 10}), F({8}), F({8})},
       [](L in) { return batch_norm(in[0] + 100, {}, {}, in[1], in[2], true); }},
      {"batch_norm_train_2d_running_stats",
       {F({256, 100}), F({100}), F({100})},
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
      {"batch_norm_eval_no_affine_large",
       {F({16, 32, 9, 9}), W({32}), W({32})},
       [](L in) { return batch_norm(in[0], in[1], in[2]); }},
      {"layer_norm_last_dim",
       {F({3, 5}), F({5}), F({5})},
       [](L in) { return layer_norm(in[0], {5}, in[1], in[2]); }},
      {"layer_norm_4097_wide",
       {F({64, 4097}), F({4097}), F({4097})},
       [](L in) { return layer_norm(in[0], {4097}, in[1], in[2]); }},
      {"layer_norm_last_two_dims",
       {F({2, 3, 4}), F({3, 4}), F({3, 4})},
       [](L in) {
         return layer_norm(in[0], {3, 4}, in[1], in[2]);
       }},
      {"layer_norm_no_affine", {F({4, 6})}, [](L in) { return layer_norm(in[0], {6}); }},
      {"layer_norm_offset_mean",
       {F({32, 300}), F({300}), F({300})},
       [](L in) { return layer_norm(in[0] + 100, {300}, in[1], in[2]); }},
      {"layer_norm_transposed_input",
       {F({40, 30}), F({40})},
       [](L in) { return layer_norm(in[0].t(), {40}, in[1]); }},
  };
}

class CudaLayerGradients : public CudaOpCaseTest {};

TEST_P(CudaLayerGradients, Float32MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat32);
}

TEST_P(CudaLayerGradients, Float64MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat64);
}

INSTANTIATE_TEST_SUITE_P(Conv,
                         CudaLayerGradients,
                         ::testing::ValuesIn(conv_cases()),
                         testing::case_name);
INSTANTIATE_TEST_SUITE_P(Pooling,
                         CudaLayerGradients,
                         ::testing::ValuesIn(pooling_cases()),
                         testing::case_name);
INSTANTIATE_TEST_SUITE_P(Normalization,
                         CudaLayerGradients,
                         ::testing::ValuesIn(normalization_cases()),
                         testing::case_name);

}  // namespace
}  // namespace tandem
