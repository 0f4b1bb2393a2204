// The op table's convolution rows (tandem/ops/conv.h): conv1d, conv2d and
// the transposed ones with stride, padding, dilation, groups (depthwise
// included), output padding, bias or none, unbatched and transposed input,
// a single output pixel, and sizes of many blocks per plane or channel.
// op_cases_test.cpp runs them, off cpu:0 at ten times the dtype's
// tolerance (kConvolution: cuDNN's algorithms round apart).
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Each also at a size of many blocks per plane.
std::vector<TwoSizes> many_block_rows() {
  return {
      {{"conv2d_depthwise_strided",
        {F({2, 3, 6, 6}), F({3, 1, 3, 3})},
        [](L in) { return conv2d(in[0], in[1], {}, 2, 1, 1, /*groups=*/in[0].size(1)); },
        kConvolution},
       {F({2, 8, 16, 16}), F({8, 1, 3, 3})}},
      {{"conv2d_pointwise",
        {F({2, 3, 4, 4}), F({5, 3, 1, 1}), F({5})},
        [](L in) { return conv2d(in[0], in[1], in[2]); },
        kConvolution},
       {F({4, 16, 7, 7}), F({8, 16, 1, 1}), F({8})}},
  };
}

std::vector<OpCase> conv2d_rows() {
  return {
      {"conv2d",
       {F({2, 3, 5, 5}), F({4, 3, 3, 3}), F({4})},
       [](L in) { return conv2d(in[0], in[1], in[2]); },
       kConvolution},
      {"conv2d_wide_padded",
       {F({8, 16, 32, 32}), F({32, 16, 3, 3}), F({32})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 1); },
       kLargeConvolution},
      {"conv2d_stride_padding_nonsquare",
       {F({2, 2, 6, 5}), F({3, 2, 3, 2})},
       [](L in) {
         return conv2d(in[0], in[1], {}, {2, 1}, {1, 0});
       },
       kConvolution},
      {"conv2d_5x5_stride2",
       {F({4, 3, 28, 28}), F({6, 3, 5, 5}), F({6})},
       [](L in) { return conv2d(in[0], in[1], in[2], 2, 2); },
       kLargeConvolution},
      {"conv2d_dilation",
       {F({1, 2, 7, 7}), F({2, 2, 3, 3}), F({2})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 2, 2); },
       kConvolution},
      {"conv2d_groups",
       {F({2, 4, 5, 5}), F({6, 2, 3, 3}), F({6})},
       [](L in) { return conv2d(in[0], in[1], in[2], 1, 1, 1, /*groups=*/2); },
       kConvolution},
      {"conv2d_unbatched",
       {F({2, 5, 5}), F({3, 2, 3, 3})},
       [](L in) { return conv2d(in[0], in[1], {}, 1, 1); },
       kConvolution},
      {"conv2d_transposed_input",
       {F({2, 3, 9, 6}), F({4, 3, 3, 3}), F({4})},
       [](L in) { return conv2d(in[0].transpose(2, 3), in[1], in[2], 1, 1); },
       kConvolution},
      {"conv2d_single_pixel_output",
       {F({3, 4, 3, 3}), F({5, 4, 3, 3}), F({5})},
       [](L in) { return conv2d(in[0], in[1], in[2]); },
       kConvolution},
  };
}

std::vector<OpCase> conv_transpose2d_rows() {
  return {
      {"conv_transpose2d",
       {F({2, 3, 3, 3}), F({3, 2, 3, 3}), F({2})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2]); },
       kConvolution},
      {"conv_transpose2d_stride2_output_padding",
       {F({2, 2, 3, 3}), F({2, 3, 3, 3}), F({3})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1, 1); },
       kConvolution},
      {"conv_transpose2d_groups_dilation_nonsquare",
       {F({1, 4, 3, 4}), F({4, 2, 3, 2}), F({4})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], in[2], {2, 1}, {1, 0}, {1, 0}, 2, {1, 2});
       },
       kConvolution},
      {"conv_transpose2d_groups_dilation_output_padding",
       {F({2, 4, 5, 6}), F({4, 3, 3, 2}), F({6})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], in[2], {2, 3}, 1, {1, 2}, 2, {1, 2});
       },
       kConvolution},
      {"conv_transpose2d_output_padding_over_stride",
       {F({1, 2, 3, 3}), F({2, 2, 2, 2})},
       [](L in) {
         return conv_transpose2d(in[0], in[1], {}, 1, 0, /*output_padding=*/1, 1, 2);
       },
       kConvolution},
      {"conv_transpose2d_from_1x1",
       {F({3, 4, 1, 1}), F({4, 2, 3, 2}), F({2})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2); },
       kConvolution},
      {"conv_transpose2d_dcgan_stem",
       {F({4, 20, 1, 1}), F({20, 16, 4, 4})},
       [](L in) { return conv_transpose2d(in[0], in[1]); },
       kLargeConvolution},
      {"conv_transpose2d_dcgan_upsample",
       {F({4, 16, 8, 8}), F({16, 8, 4, 4}), F({8})},
       [](L in) { return conv_transpose2d(in[0], in[1], in[2], 2, 1); },
       kLargeConvolution},
      {"conv_transpose2d_unbatched",
       {F({2, 3, 3}), F({2, 2, 2, 2})},
       [](L in) { return conv_transpose2d(in[0], in[1], {}, 2); },
       kConvolution},
  };
}

std::vector<OpCase> conv1d_rows() {
  return {
      {"conv1d_stride_padding_groups",
       {F({2, 4, 7}), F({6, 2, 3}), F({6})},
       [](L in) { return conv1d(in[0], in[1], in[2], 2, 1, 1, /*groups=*/2); },
       kConvolution},
      {"conv1d_strided_groups_large",
       {F({4, 8, 50}), F({6, 4, 5}), F({6})},
       [](L in) { return conv1d(in[0], in[1], in[2], 2, 2, 1, /*groups=*/2); },
       kLargeConvolution},
      {"conv1d_dilation_unbatched",
       {F({3, 8}), F({2, 3, 3})},
       [](L in) { return conv1d(in[0], in[1], {}, 1, 2, /*dilation=*/2); },
       kConvolution},
      {"conv_transpose1d",
       {F({2, 3, 4}), F({3, 2, 3}), F({2})},
       [](L in) { return conv_transpose1d(in[0], in[1], in[2], 2, 1, 1); },
       kConvolution},
      {"conv_transpose1d_strided",
       {F({3, 6, 9}), F({6, 4, 5}), F({4})},
       [](L in) { return conv_transpose1d(in[0], in[1], in[2], 2, 2, 1); },
       kConvolution},
      {"conv_transpose1d_unbatched_groups_dilation",
       {F({4, 5}), F({4, 1, 2})},
       [](L in) { return conv_transpose1d(in[0], in[1], {}, 1, 1, 0, 2, 2); },
       kConvolution},
  };
}

INSTANTIATE_TEST_SUITE_P(Convolution,
                         OpTable,
                         ::testing::ValuesIn(joined({at_two_sizes(many_block_rows()),
                                                     conv2d_rows(),
                                                     conv_transpose2d_rows(),
                                                     conv1d_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
