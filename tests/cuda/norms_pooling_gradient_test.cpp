// Issue 22's composed layers on the device under test, in float32 and
// float64: conv1d, 1-D and adaptive pooling, group and instance norm and
// resampling. Each is built from ops with kernels of their own (conv2d,
// the 2-D poolings, layer_norm, batch_norm, index_select, matmul), so on a
// GPU this checks the composition's index tables and weight matrices land
// on the device; sizes are large enough for many blocks per plane.
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::CudaOpCaseTest;
using testing::F;
using testing::OpCase;
using L = const std::vector<Tensor>&;

constexpr double kConvLoosen = 10;  // as layer_gradient_test.cpp (cuDNN)

std::vector<OpCase> cases() {
  return {
      {"conv1d_strided_groups",
       {F({4, 8, 50}), F({6, 4, 5}), F({6})},
       [](L in) { return conv1d(in[0], in[1], in[2], 2, 2, 1, /*groups=*/2); },
       kConvLoosen},
      {"max_pool1d", {F({4, 6, 33})}, [](L in) { return max_pool1d(in[0], 3, 2, 1); }},
      {"avg_pool1d_ceil",
       {F({4, 6, 33})},
       [](L in) { return avg_pool1d(in[0], 4, 3, 1, /*ceil_mode=*/true); }},
      {"adaptive_avg_pool2d_global",
       {F({8, 16, 7, 7})},
       [](L in) { return adaptive_avg_pool2d(in[0], 1); }},
      {"adaptive_avg_pool2d_uneven",
       {F({4, 6, 13, 17})},
       [](L in) {
         return adaptive_avg_pool2d(in[0], {5, 7});
       }},
      {"adaptive_max_pool2d_global",
       {F({8, 16, 7, 7})},
       [](L in) { return adaptive_max_pool2d(in[0], 1); }},
      {"adaptive_max_pool2d_uneven",
       {F({4, 6, 13, 17})},
       [](L in) {
         return adaptive_max_pool2d(in[0], {5, 7});
       }},
      {"group_norm",
       {F({4, 12, 9, 9}), F({12}), F({12})},
       [](L in) { return group_norm(in[0], 4, in[1], in[2]); }},
      {"instance_norm_affine",
       {F({4, 6, 9, 9}), F({6}), F({6})},
       [](L in) { return instance_norm(in[0], {}, {}, in[1], in[2]); }},
      {"upsample_nearest2d",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_nearest2d(in[0], {20, 15});
       }},
      {"upsample_bilinear2d",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_bilinear2d(in[0], {20, 15}, false);
       }},
      {"upsample_bilinear2d_align_corners",
       {F({2, 4, 9, 7})},
       [](L in) {
         return upsample_bilinear2d(in[0], {18, 14}, true);
       }},
  };
}

class CudaNormsPoolingGradients : public CudaOpCaseTest {};

TEST_P(CudaNormsPoolingGradients, Float32MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat32);
}

TEST_P(CudaNormsPoolingGradients, Float64MatchesTheFloat64Reference) {
  testing::expect_case_matches_reference(GetParam(), kFloat64);
}

INSTANTIATE_TEST_SUITE_P(Layers,
                         CudaNormsPoolingGradients,
                         ::testing::ValuesIn(cases()),
                         testing::case_name);

}  // namespace
}  // namespace tandem
