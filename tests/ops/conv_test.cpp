// conv2d: values against a textbook loop over many geometries (stride,
// padding, dilation, groups, non-square kernels, 1x1), unbatched input,
// empty batches, results independent of the thread count, and errors.
// Gradients are checked in tests/consistency (gradcheck) and against
// PyTorch in tests/parity.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

struct Geometry {
  int64_t batch, in_channels, height, width, out_channels, kernel_h, kernel_w;
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w, groups;
};

// The convolution by its definition, in float64: out[n, o, i, j] = bias[o] +
// sum over the group's channels c and kernel cells (p, q) of
// weight[o, c, p, q] * input[n, g * Cin_g + c, i * s + p * d - pad, ...].
Tensor naive_conv2d(const Tensor& input,
                    const Tensor& weight,
                    const Tensor& bias,
                    const Geometry& g) {
  NoGradGuard no_grad;
  const Tensor x = input.contiguous(), w = weight.contiguous();
  const int64_t out_h =
      (g.height + 2 * g.pad_h - g.dilation_h * (g.kernel_h - 1) - 1) / g.stride_h + 1;
  const int64_t out_w =
      (g.width + 2 * g.pad_w - g.dilation_w * (g.kernel_w - 1) - 1) / g.stride_w + 1;
  Tensor out = zeros({g.batch, g.out_channels, out_h, out_w}, kFloat64);
  const double* px = x.data_ptr<double>();
  const double* pw = w.data_ptr<double>();
  double* po = out.data_ptr<double>();
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups;
  for (int64_t n = 0; n < g.batch; ++n) {
    for (int64_t o = 0; o < g.out_channels; ++o) {
      const int64_t group = o / cout_g;
      for (int64_t i = 0; i < out_h; ++i) {
        for (int64_t j = 0; j < out_w; ++j) {
          double total = bias.defined() ? bias[o].item<double>() : 0.0;
          for (int64_t c = 0; c < cin_g; ++c) {
            for (int64_t p = 0; p < g.kernel_h; ++p) {
              for (int64_t q = 0; q < g.kernel_w; ++q) {
                const int64_t h = i * g.stride_h + p * g.dilation_h - g.pad_h;
                const int64_t v = j * g.stride_w + q * g.dilation_w - g.pad_w;
                if (h < 0 || h >= g.height || v < 0 || v >= g.width) continue;
                const int64_t channel = group * cin_g + c;
                total += pw[((o * cin_g + c) * g.kernel_h + p) * g.kernel_w + q] *
                         px[((n * g.in_channels + channel) * g.height + h) * g.width + v];
              }
            }
          }
          po[((n * g.out_channels + o) * out_h + i) * out_w + j] = total;
        }
      }
    }
  }
  return out;
}

Tensor conv2d_of(const Tensor& x, const Tensor& w, const Tensor& b, const Geometry& g) {
  return conv2d(x,
                w,
                b,
                {g.stride_h, g.stride_w},
                {g.pad_h, g.pad_w},
                {g.dilation_h, g.dilation_w},
                g.groups);
}

class ConvGeometry : public ::testing::TestWithParam<Geometry> {};

TEST_P(ConvGeometry, MatchesTheDefinition) {
  const Geometry g = GetParam();
  Generator gen(7);
  Tensor x = randn({g.batch, g.in_channels, g.height, g.width}, gen, kFloat64);
  Tensor w = randn(
      {g.out_channels, g.in_channels / g.groups, g.kernel_h, g.kernel_w}, gen, kFloat64);
  Tensor b = randn({g.out_channels}, gen, kFloat64);
  EXPECT_TRUE(all_close(conv2d_of(x, w, b, g), naive_conv2d(x, w, b, g), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(conv2d_of(x, w, {}, g), naive_conv2d(x, w, {}, g), 1e-12, 1e-12));
  // float32 runs the same code on rounded values.
  EXPECT_TRUE(all_close(conv2d_of(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), g),
                        naive_conv2d(x, w, b, g).to(kFloat32),
                        1e-4,
                        1e-5));
}

INSTANTIATE_TEST_SUITE_P(
    Conv2d,
    ConvGeometry,
    ::testing::Values(
        //         N  Cin H  W  Cout kh kw sh sw ph pw dh dw groups
        Geometry{2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0, 1, 1, 1},  // plain
        Geometry{2, 3, 7, 6, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1},  // same padding
        Geometry{3, 2, 9, 8, 5, 3, 2, 2, 3, 1, 0, 1, 1, 1},  // strides, non-square
        Geometry{1, 2, 9, 9, 3, 3, 3, 1, 2, 2, 1, 2, 3, 1},  // dilation
        Geometry{2, 4, 6, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 2},  // groups
        Geometry{2, 4, 6, 6, 4, 3, 3, 2, 2, 1, 1, 1, 1, 4},  // depthwise
        Geometry{2, 3, 5, 4, 4, 1, 1, 1, 1, 0, 0, 1, 1, 1},  // pointwise (no im2col)
        Geometry{2, 4, 5, 4, 6, 1, 1, 1, 1, 0, 0, 1, 1, 2},  // pointwise, groups
        Geometry{1, 2, 5, 5, 3, 1, 1, 2, 2, 1, 1, 1, 1, 1},  // 1x1 with stride, padding
        Geometry{2, 1, 3, 3, 2, 3, 3, 1, 1, 0, 0, 1, 1, 1},  // kernel = input
        Geometry{1, 1, 2, 3, 2, 5, 4, 1, 1, 2, 1, 1, 1, 1},  // kernel > input, padded
        Geometry{5, 1, 28, 28, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1}));  // MNIST-like

TEST(Conv2d, SmallValuesByHand) {
  // A 3x3 ramp convolved with a 2x2 kernel of ones sums each 2x2 block.
  Tensor x = arange(9, kFloat64).view({1, 1, 3, 3});
  Tensor w = ones({1, 1, 2, 2}, kFloat64);
  EXPECT_TRUE(
      all_close(conv2d(x, w), testing::from_values({8, 12, 20, 24}, {1, 1, 2, 2})));
  // Padding 1, stride 2, bias 1: windows at rows/cols {-1, 0} and {1, 2}.
  EXPECT_TRUE(all_close(conv2d(x, w, tensor<double>({1.0}), 2, 1),
                        testing::from_values({1, 4, 10, 25}, {1, 1, 2, 2})));
}

TEST(Conv2d, UnbatchedInput) {
  Generator gen(3);
  Tensor x = randn({3, 6, 5}, gen, kFloat64).requires_grad_();
  Tensor w = randn({4, 3, 3, 3}, gen, kFloat64);
  Tensor y = conv2d(x, w, {}, 1, 1);
  EXPECT_EQ(y.sizes(), (IntList{4, 6, 5}));
  EXPECT_TRUE(all_close(y, conv2d(x.unsqueeze(0), w, {}, 1, 1).squeeze(0), 0, 0));
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
}

TEST(Conv2d, EmptyShapes) {
  Tensor x = zeros({0, 2, 5, 5}, kFloat64).requires_grad_();
  Tensor w = ones({3, 2, 3, 3}, kFloat64).requires_grad_();
  Tensor b = ones({3}, kFloat64).requires_grad_();
  Tensor y = conv2d(x, w, b);
  EXPECT_EQ(y.sizes(), (IntList{0, 3, 3, 3}));
  y.sum().backward();
  EXPECT_TRUE(all_close(w.grad(), zeros({3, 2, 3, 3}, kFloat64), 0, 0));
  EXPECT_TRUE(all_close(b.grad(), zeros({3}, kFloat64), 0, 0));
  // No input channels: only the bias is left. No output channels: nothing.
  EXPECT_TRUE(all_close(conv2d(zeros({2, 0, 5, 5}), zeros({3, 0, 3, 3}), ones({3})),
                        ones({2, 3, 3, 3}),
                        0,
                        0));
  EXPECT_EQ(conv2d(zeros({2, 2, 5, 5}), zeros({0, 2, 3, 3})).sizes(),
            (IntList{2, 0, 3, 3}));
}

TEST(Conv2d, StridedInputsAreRead) {
  Generator gen(5);
  Tensor x = randn({2, 3, 6, 7}, gen, kFloat64);
  Tensor w = randn({4, 3, 3, 3}, gen, kFloat64);
  Tensor xt = x.transpose(2, 3).contiguous().transpose(2, 3);  // same values, strided
  ASSERT_FALSE(xt.is_contiguous());
  EXPECT_TRUE(all_close(conv2d(xt, w), conv2d(x, w), 0, 0));
}

// See Note [Convolution as GEMM]: every value, the summed weight and bias
// gradients included, is the same whatever the core budget. A batch of 9
// runs samples in parallel on 3 threads; a batch of 2 runs them one after
// the other there, spreading each product over the threads instead.
TEST(Conv2d, ResultsDoNotDependOnTheThreadCount) {
  const int64_t saved = num_threads();
  for (int64_t batch : {9, 2}) {
    Generator gen(11);
    // Large enough for the products to be cut into blocks.
    Tensor x = randn({batch, 8, 40, 40}, gen);
    Tensor w = randn({64, 8, 3, 3}, gen);
    Tensor b = randn({64}, gen);
    Tensor g = randn({batch, 64, 40, 40}, gen);
    auto run = [&](int64_t threads) {
      set_num_threads(threads);
      Tensor xi = x.clone().requires_grad_(), wi = w.clone().requires_grad_();
      Tensor bi = b.clone().requires_grad_();
      Tensor y = conv2d(xi, wi, bi, 1, 1);
      y.backward(g);
      return std::vector<Tensor>{y, xi.grad(), wi.grad(), bi.grad()};
    };
    const std::vector<Tensor> one = run(1), three = run(3);
    set_num_threads(saved);
    for (size_t i = 0; i < one.size(); ++i) {
      EXPECT_TRUE(all_close(three[i], one[i], 0, 0))
          << "batch " << batch << " result " << i;
    }
  }
}

TEST(Conv2d, GradientsOfOnlySomeInputs) {
  Generator gen(13);
  Tensor x = randn({2, 2, 5, 5}, gen, kFloat64);
  Tensor w = randn({3, 2, 3, 3}, gen, kFloat64).requires_grad_();
  Tensor b = randn({3}, gen, kFloat64);
  conv2d(x, w, b).sum().backward();
  EXPECT_TRUE(w.grad().defined());
  EXPECT_FALSE(x.grad().defined());
  // With input of ones and an all-ones upstream gradient, each weight's
  // gradient counts the output cells it touched: 2 samples x 3 x 3.
  Tensor ones_in = ones({2, 2, 5, 5}, kFloat64);
  Tensor w2 = randn({3, 2, 3, 3}, gen, kFloat64).requires_grad_();
  conv2d(ones_in, w2).sum().backward();
  EXPECT_TRUE(all_close(w2.grad(), full({3, 2, 3, 3}, 18.0, kFloat64)));
}

TEST(Conv2d, Errors) {
  Tensor x = zeros({2, 3, 8, 8});
  Tensor w = zeros({4, 3, 3, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(zeros({3, 8}), w);
      },
      "conv2d: expected a 3-D [C, H, W] (unbatched) or 4-D [N, C, H, W] "
      "(batched) input, got shape [3, 8]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(x, zeros({4, 3, 3}));
      },
      "conv2d: expected a 4-D weight [out_channels, in_channels / "
      "groups, kernel_h, kernel_w], got shape [4, 3, 3]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(zeros({2, 1, 8, 8}), w);
      },
      "conv2d: input of shape [2, 1, 8, 8] has 1 channels, but weight "
      "of shape [4, 3, 3, 3] with groups=1 expects 3"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(zeros({2, 6, 8, 8}), zeros({4, 2, 3, 3}), {}, 1, 0, 1, 3);
      },
      "conv2d: groups=3 must divide the output channels, but weight "
      "has shape [4, 2, 3, 3]"));
  EXPECT_TRUE(throws_with([&] { conv2d(x, w, {}, 1, 0, 1, 0); },
                          "conv2d: groups must be positive, got 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(zeros({2, 3, 2, 8}), w);
      },
      "conv2d: kernel of shape [4, 3, 3, 3] (extent 3 with dilation 1) "
      "is larger than the padded input (2) along the height"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(x, w, {}, 1, 0, {1, 4});
      },
      "(extent 9 with dilation 4) is larger than the padded input (8) "
      "along the width"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(x, w, {}, {1, 0});
      },
      "conv2d: stride must be positive, got [1, 0]"));
  EXPECT_TRUE(throws_with([&] { conv2d(x, w, {}, -1); },
                          "conv2d: stride must be positive, got [-1, -1]"));
  EXPECT_TRUE(throws_with([&] { conv2d(x, w, {}, 1, -1); },
                          "conv2d: padding must be non-negative, got [-1, -1]"));
  EXPECT_TRUE(throws_with([&] { conv2d(x, w, {}, 1, 0, 0); },
                          "conv2d: dilation must be positive, got [0, 0]"));
  EXPECT_TRUE(throws_with([&] { conv2d(x, w, zeros({3})); },
                          "conv2d: expected bias of shape [4] (weight has 4 output "
                          "channels), got [3]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(x, zeros({4, 3, 3, 3}, kFloat64));
      },
      "conv2d: expected weight of dtype float32 (as input), got float64"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(zeros({2, 3, 8, 8}, kInt64), w);
      },
      "conv2d: expected 'input' to be float32 or float64"));
  EXPECT_TRUE(
      throws_with([&] { conv2d(x, w.to("cpu:1")); },
                  "conv2d: expected all tensors on the same device, got cpu:0 and "
                  "cpu:1"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv2d(x, w, {}, {1, 2, 3});
      },
      "expected 2 values (or one for all dimensions), but got 3"));
}

TEST(Conv2d, AnEmptyKernelIsRefused) {
  EXPECT_TRUE(throws_with(
      [] {
        conv2d(zeros({1, 2, 4, 4}), zeros({3, 2, 0, 3}));
      },
      "conv2d: kernel size should be greater than zero"));
}

}  // namespace
}  // namespace tandem
