// conv_transpose1d / conv_transpose2d: values against a textbook loop (each
// input cell scattered through the kernel) over many geometries (stride,
// padding, output_padding, dilation, groups, non-square kernels, the 1x1
// input of a DCGAN generator), unbatched input, empty batches, 1-d as 2-d,
// and errors. Gradients are checked in tests/consistency (gradcheck,
// gradgradcheck) and against PyTorch in tests/parity.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

struct Geometry {
  int64_t batch, in_channels, height, width, out_channels, kernel_h, kernel_w;
  int64_t stride_h, stride_w, pad_h, pad_w, out_pad_h, out_pad_w;
  int64_t dilation_h, dilation_w, groups;
};

// The definition, in float64: every input cell x[n, c, i, j] adds
// x * weight[c, o, p, q] to out[n, group * Cout_g + o, i * s + p * d - pad,
// j * s + q * d - pad] where that lies inside the output.
Tensor naive_conv_transpose2d(const Tensor& input,
                              const Tensor& weight,
                              const Tensor& bias,
                              const Geometry& g) {
  NoGradGuard no_grad;
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const int64_t out_h = (g.height - 1) * g.stride_h - 2 * g.pad_h +
                        g.dilation_h * (g.kernel_h - 1) + g.out_pad_h + 1;
  const int64_t out_w = (g.width - 1) * g.stride_w - 2 * g.pad_w +
                        g.dilation_w * (g.kernel_w - 1) + g.out_pad_w + 1;
  Tensor out = zeros({g.batch, g.out_channels, out_h, out_w}, kFloat64);
  const double* px = x.data_ptr<double>();
  const double* pw = w.data_ptr<double>();
  double* po = out.data_ptr<double>();
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t c = 0; c < g.in_channels; ++c) {
      const int64_t group = c / cin_g;
      for (int64_t i = 0; i < g.height; ++i) {
        for (int64_t j = 0; j < g.width; ++j) {
          const double v = px[((n * g.in_channels + c) * g.height + i) * g.width + j];
          for (int64_t o = 0; o < cout_g; ++o) {
            for (int64_t p = 0; p < g.kernel_h; ++p) {
              for (int64_t q = 0; q < g.kernel_w; ++q) {
                const int64_t h = i * g.stride_h + p * g.dilation_h - g.pad_h;
                const int64_t u = j * g.stride_w + q * g.dilation_w - g.pad_w;
                if (h < 0 || h >= out_h || u < 0 || u >= out_w) continue;
                const int64_t channel = group * cout_g + o;
                po[((n * g.out_channels + channel) * out_h + h) * out_w + u] +=
                    v * pw[((c * cout_g + o) * g.kernel_h + p) * g.kernel_w + q];
              }
            }
          }
        }
      }
    }
  }
  if (bias.defined()) out += bias.view({1, g.out_channels, 1, 1});
  return out;
}

Tensor conv_transpose_of(const Tensor& x,
                         const Tensor& w,
                         const Tensor& b,
                         const Geometry& g) {
  return conv_transpose2d(x,
                          w,
                          b,
                          {g.stride_h, g.stride_w},
                          {g.pad_h, g.pad_w},
                          {g.out_pad_h, g.out_pad_w},
                          g.groups,
                          {g.dilation_h, g.dilation_w});
}

class ConvTransposeGeometry : public ::testing::TestWithParam<Geometry> {};

TEST_P(ConvTransposeGeometry, MatchesTheDefinition) {
  const Geometry g = GetParam();
  Generator gen(11);
  Tensor x = randn({g.batch, g.in_channels, g.height, g.width}, gen, kFloat64);
  Tensor w = randn(
      {g.in_channels, g.out_channels / g.groups, g.kernel_h, g.kernel_w}, gen, kFloat64);
  Tensor b = randn({g.out_channels}, gen, kFloat64);
  const Tensor want = naive_conv_transpose2d(x, w, b, g);
  EXPECT_TRUE(all_close(conv_transpose_of(x, w, b, g), want, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(
      conv_transpose_of(x, w, {}, g), naive_conv_transpose2d(x, w, {}, g), 1e-12, 1e-12));
  EXPECT_TRUE(
      all_close(conv_transpose_of(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), g),
                want.to(kFloat32),
                1e-4,
                1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    ConvTranspose2d,
    ConvTransposeGeometry,
    ::testing::Values(
        //  N Cin H  W Cout kh kw sh sw ph pw oph opw dh dw groups
        Geometry{2, 3, 4, 3, 4, 3, 3, 1, 1, 0, 0, 0, 0, 1, 1, 1},  // plain
        Geometry{2, 3, 4, 4, 2, 4, 4, 2, 2, 1, 1, 0, 0, 1, 1, 1},  // DCGAN upsampling
        Geometry{3, 8, 1, 1, 6, 4, 4, 1, 1, 0, 0, 0, 0, 1, 1, 1},  // DCGAN first layer
        Geometry{2, 2, 3, 4, 3, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1},  // output_padding
        Geometry{1, 2, 5, 4, 3, 3, 2, 3, 1, 1, 0, 2, 0, 1, 1, 1},  // strides, non-square
        Geometry{1, 2, 4, 4, 2, 3, 3, 1, 1, 2, 1, 0, 0, 2, 3, 1},  // dilation
        Geometry{
            1, 2, 3, 3, 2, 2, 2, 1, 1, 0, 0, 1, 1, 2, 2, 1},  // output_padding >= stride
        Geometry{2, 4, 3, 3, 6, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1, 2},    // groups
        Geometry{2, 4, 4, 4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4},    // depthwise
        Geometry{2, 3, 5, 4, 4, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1},    // pointwise
        Geometry{1, 2, 3, 3, 2, 3, 3, 1, 1, 2, 2, 0, 0, 1, 1, 1},    // padding trims all
        Geometry{8, 2, 7, 7, 3, 4, 4, 2, 2, 1, 1, 0, 0, 1, 1, 1}));  // batch > threads

TEST(ConvTranspose2d, SmallValuesByHand) {
  // A 2x2 input spread by stride 2 through a 2x2 kernel of ones tiles the
  // 4x4 output with each input value.
  Tensor x = testing::from_values({1, 2, 3, 4}, {1, 1, 2, 2});
  Tensor y = conv_transpose2d(x, ones({1, 1, 2, 2}, kFloat64), {}, 2);
  EXPECT_TRUE(
      all_close(y,
                testing::from_values({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4},
                                     {1, 1, 4, 4}),
                0,
                0));
}

TEST(ConvTranspose2d, UnbatchedAndEmptyBatch) {
  Generator gen(3);
  Tensor x = randn({3, 4, 4}, gen, kFloat64), w = randn({3, 2, 3, 3}, gen, kFloat64);
  Tensor y = conv_transpose2d(x, w, {}, 2, 1, 1);
  EXPECT_EQ(y.sizes(), (IntList{2, 8, 8}));
  EXPECT_TRUE(
      all_close(y, conv_transpose2d(x.unsqueeze(0), w, {}, 2, 1, 1).squeeze(0), 0, 0));
  EXPECT_EQ(conv_transpose2d(zeros({0, 3, 4, 4}, kFloat64), w, {}, 2).sizes(),
            (IntList{0, 2, 9, 9}));
}

TEST(ConvTranspose1d, IsTheTwoDimOpOverAHeightOfOne) {
  Generator gen(5);
  Tensor x = randn({2, 4, 6}, gen, kFloat64), w = randn({4, 3, 3}, gen, kFloat64);
  Tensor b = randn({6}, gen, kFloat64);
  Tensor y = conv_transpose1d(x, w, b, 2, 1, 1, /*groups=*/2, /*dilation=*/2);
  Tensor want = conv_transpose2d(
                    x.unsqueeze(2), w.unsqueeze(2), b, {1, 2}, {0, 1}, {0, 1}, 2, {1, 2})
                    .squeeze(2);
  EXPECT_EQ(y.sizes(), (IntList{2, 6, 14}));
  EXPECT_TRUE(all_close(y, want, 0, 0));
  EXPECT_EQ(conv_transpose1d(x[0], w, b, 2, 1, 1, 2, 2).sizes(), (IntList{6, 14}));
}

TEST(ConvTranspose2d, Errors) {
  Tensor x = zeros({2, 4, 5, 5});
  Tensor w = zeros({4, 3, 3, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose2d(zeros({4, 5}), w);
      },
      "conv_transpose2d: expected a 3-D [C, H, W] (unbatched) or 4-D "
      "[N, C, H, W] input, got shape [4, 5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose2d(x, zeros({4, 3, 3}));
      },
      "conv_transpose2d: expected a 4-D weight [in_channels, "
      "out_channels / groups, kernel_h, kernel_w], got shape [4, 3, 3]"));
  EXPECT_TRUE(throws_with([&] { conv_transpose2d(x, w, {}, 2, 0, 2); },
                          "conv_transpose2d: output_padding must be smaller than either "
                          "stride or dilation, got output_padding [2, 2], stride [2, 2], "
                          "dilation [1, 1]"));
  EXPECT_TRUE(
      throws_with([&] { conv_transpose2d(x, w, {}, 1, 0, 0, /*groups=*/3); },
                  "conv_transpose2d: groups=3 must divide the input channels, but "
                  "weight has shape [4, 3, 3, 3]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose2d(zeros({2, 3, 5, 5}), w);
      },
      "conv_transpose2d: input of shape [2, 3, 5, 5] has 3 channels, "
      "but weight of shape [4, 3, 3, 3] expects 4"));
  EXPECT_TRUE(
      throws_with([&] { conv_transpose2d(x, w, zeros({4})); },
                  "conv_transpose2d: expected bias of shape [3] (weight [4, 3, 3, "
                  "3] with groups=1 gives 3 output channels), got [4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose2d(zeros({1, 4, 1, 1}), w, {}, 1, 2);
      },
      "conv_transpose2d: the output size [-1, -1] is too small (must "
      "be positive), for input of shape [1, 4, 1, 1], weight of shape "
      "[4, 3, 3, 3], stride [1, 1], padding [2, 2], dilation [1, 1] "
      "and output_padding [0, 0]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose2d(x, w, {}, {1, 0});
      },
      "conv_transpose2d: stride must be positive, got [1, 0]"));
  EXPECT_TRUE(throws_with([&] { conv_transpose2d(x, w, {}, 1, 0, -1); },
                          "conv_transpose2d: output_padding must be non-negative, got "
                          "[-1, -1]"));
  EXPECT_TRUE(
      throws_with([&] { conv_transpose2d(x, w.to(kFloat64)); },
                  "conv_transpose2d: expected weight of dtype float32 (as input), "
                  "got float64"));
  EXPECT_TRUE(
      throws_with([&] { conv_transpose2d(x, w.to(Device("cpu:1"))); },
                  "conv_transpose2d: expected all tensors on the same device, got "
                  "cpu:0 and cpu:1"));
}

TEST(ConvTranspose1d, Errors) {
  Tensor w = zeros({4, 3, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose1d(zeros({2, 4, 5, 5}), w);
      },
      "conv_transpose1d: expected a 2-D [C, L] (unbatched) or 3-D "
      "[N, C, L] input, got shape [2, 4, 5, 5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv_transpose1d(zeros({2, 4, 5}), w, {}, 1, 0, 1);
      },
      "conv_transpose1d: output_padding must be smaller than either "
      "stride or dilation, got output_padding [1], stride [1], "
      "dilation [1]"));
}

}  // namespace
}  // namespace tandem
