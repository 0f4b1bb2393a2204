// The op table's pooling and resampling rows (tandem/ops/pooling.h,
// tandem/ops/upsample.h): max and average pooling in 1-D and 2-D with
// overlap, padding, dilation, ceil_mode, count_include_pad,
// divisor_override and unbatched input; adaptive pooling that divides
// evenly, unevenly and upsamples; nearest and bilinear resampling; and
// evaluation-mode channel dropout. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

std::vector<OpCase> pool2d_rows() {
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
       [](L in) { return max_pool2d(in[0], 3, 2, 1, 1, /*ceil_mode=*/true); },
       kTooLargeForFiniteDifferences},
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
       [](L in) { return avg_pool2d(in[0], 3, 2, 1, /*ceil_mode=*/true, false); },
       kTooLargeForFiniteDifferences},
      {"avg_pool2d_unbatched", {F({3, 8, 8})}, [](L in) { return avg_pool2d(in[0], 4); }},
  };
}

std::vector<OpCase> pool1d_rows() {
  return {
      {"max_pool1d_overlap_padding",
       {F({4, 6, 33})},
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
      {"avg_pool1d_overlap_padding_ceil_mode",
       {F({4, 6, 33})},
       [](L in) { return avg_pool1d(in[0], 4, 3, 1, /*ceil_mode=*/true); }},
  };
}

// Global pooling also over many planes.
std::vector<TwoSizes> many_plane_rows() {
  return {
      {{"adaptive_avg_pool2d_global",
        {F({2, 3, 5, 4})},
        [](L in) { return adaptive_avg_pool2d(in[0], 1); }},
       {F({8, 16, 7, 7})}},
      {{"adaptive_avg_pool2d_uneven",
        {F({2, 2, 5, 7})},
        [](L in) {
          return adaptive_avg_pool2d(in[0], {3, 4});
        }},
       {F({4, 6, 13, 17})}},
      {{"adaptive_max_pool2d_global",
        {F({2, 3, 4, 5})},
        [](L in) { return adaptive_max_pool2d(in[0], 1); }},
       {F({8, 16, 7, 7})}},
      {{"adaptive_max_pool2d_uneven",
        {F({2, 2, 5, 7})},
        [](L in) {
          return adaptive_max_pool2d(in[0], {3, 4});
        }},
       {F({4, 6, 13, 17})}},
  };
}

std::vector<OpCase> resampling_rows() {
  return {
      {"adaptive_avg_pool2d_divisible_unbatched",
       {F({2, 6, 4})},
       [](L in) {
         return adaptive_avg_pool2d(in[0], {3, 2});
       }},
      {"adaptive_max_pool2d_upsampling_unbatched",
       {F({2, 3, 2})},
       [](L in) {
         return adaptive_max_pool2d(in[0], {4, 3});
       }},
      {"upsample_nearest2d_size",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_nearest2d(in[0], {20, 15});
       }},
      {"upsample_nearest2d_scale",
       {F({1, 2, 3, 3})},
       [](L in) {
         return upsample_nearest2d(in[0], {7, 6}, 2.5, 2.0);
       }},
      {"upsample_bilinear2d",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_bilinear2d(in[0], {20, 15}, /*align_corners=*/false);
       }},
      {"upsample_bilinear2d_align_corners",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_bilinear2d(in[0], {18, 14}, /*align_corners=*/true);
       }},
      {"upsample_bilinear2d_scale_down",
       {F({1, 2, 6, 5})},
       [](L in) {
         return upsample_bilinear2d(in[0], {4, 2}, false, 0.75, 0.5);
       }},
      {"dropout2d_eval",
       {F({2, 3, 2, 2})},
       [](L in) { return dropout2d(in[0], 0.5, false); }},
  };
}

INSTANTIATE_TEST_SUITE_P(PoolingAndResampling,
                         OpTable,
                         ::testing::ValuesIn(joined({pool2d_rows(),
                                                     pool1d_rows(),
                                                     at_two_sizes(many_plane_rows()),
                                                     resampling_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
