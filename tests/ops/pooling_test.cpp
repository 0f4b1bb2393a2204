// max_pool2d and avg_pool2d: values worked out by hand for every window
// rule (padding, dilation, ceil_mode, count_include_pad, divisor_override,
// ties and NaN), gradients routed to the right cells, and errors.
// gradcheck runs in tests/consistency, PyTorch parity in tests/parity.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::from_values;
using testing::throws_with;

// 0, 1, 2, ... as one [1, 1, h, w] image.
Tensor ramp(int64_t h, int64_t w) { return arange(h * w, kFloat64).view({1, 1, h, w}); }

Tensor image(const std::vector<double>& values, int64_t h, int64_t w) {
  return from_values(values, {1, 1, h, w});
}

Tensor indices(const std::vector<int64_t>& values, int64_t h, int64_t w) {
  return tensor<int64_t>(values).view({1, 1, h, w});
}

TEST(MaxPool2d, Values) {
  auto [out, idx] = max_pool2d_with_indices(ramp(4, 4), 2);
  EXPECT_TRUE(all_close(out, image({5, 7, 13, 15}, 2, 2)));
  EXPECT_TRUE(equal(idx, indices({5, 7, 13, 15}, 2, 2)));
  // Dilation 2, stride 1: each window is cells (i, j), (i, j+2), (i+2, j), (i+2, j+2).
  EXPECT_TRUE(
      all_close(max_pool2d(ramp(4, 4), 2, 1, 0, 2), image({10, 11, 14, 15}, 2, 2)));
}

TEST(MaxPool2d, PaddingNeverWins) {
  // All values negative: the padding's -inf loses to every one of them.
  Tensor x = -ramp(3, 3) - 1;
  auto [out, idx] = max_pool2d_with_indices(x, 3, 1, 1);
  EXPECT_TRUE(all_close(out, image({-1, -1, -2, -1, -1, -2, -4, -4, -5}, 3, 3)));
  EXPECT_TRUE(equal(idx, indices({0, 0, 1, 0, 0, 1, 3, 3, 4}, 3, 3)));
}

TEST(MaxPool2d, CeilModeKeepsPartialWindows) {
  EXPECT_TRUE(all_close(max_pool2d(ramp(5, 5), 2), image({6, 8, 16, 18}, 2, 2)));
  EXPECT_TRUE(all_close(max_pool2d(ramp(5, 5), 2, {}, 0, 1, /*ceil_mode=*/true),
                        image({6, 8, 9, 16, 18, 19, 21, 23, 24}, 3, 3)));
  // A last window that would start in the right padding is dropped: H = 5,
  // k 2, s 2, p 1 rounds up to windows at -1, 1, 3 and 5, but 5 is padding.
  EXPECT_EQ(max_pool2d(ramp(5, 5), 2, 2, 1, 1, true).sizes(), (IntList{1, 1, 3, 3}));
  EXPECT_EQ(max_pool2d(ramp(6, 6), 3, 2, 0, 1, true).sizes(), (IntList{1, 1, 3, 3}));
  EXPECT_EQ(max_pool2d(ramp(6, 6), 3, 2, 0, 1, false).sizes(), (IntList{1, 1, 2, 2}));
}

TEST(MaxPool2d, TiesTakeTheFirstAndNanWins) {
  auto [out, idx] = max_pool2d_with_indices(zeros({1, 1, 3, 3}, kFloat64), 2, 1);
  EXPECT_TRUE(equal(idx, indices({0, 1, 3, 4}, 2, 2)));
  Tensor x = ramp(2, 2);
  x.data_ptr<double>()[1] = std::numeric_limits<double>::quiet_NaN();
  auto [nan_out, nan_idx] = max_pool2d_with_indices(x, 2);
  EXPECT_TRUE(std::isnan(nan_out.item<double>()));
  EXPECT_EQ(nan_idx.item<int64_t>(), 1);
  // A later NaN wins over an earlier one (PyTorch's `v > max || isnan(v)`),
  // in float32 as well, whether the windows sweep whole rows (no padding)
  // or are clipped one by one (padding).
  Tensor y = ramp(2, 2).to(kFloat32);
  y.data_ptr<float>()[1] = std::numeric_limits<float>::quiet_NaN();
  y.data_ptr<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(std::get<1>(max_pool2d_with_indices(y, 2)).item<int64_t>(), 3);
  EXPECT_TRUE(equal(std::get<1>(max_pool2d_with_indices(y, 3, 1, 1)),
                    indices({3, 3, 3, 3}, 2, 2)));
}

TEST(MaxPool2d, WindowsInsideTheImageMatchANaiveSearch) {
  // Values 0..3 only, so most windows hold ties (the first cell in
  // row-major window order must win); a rectangular kernel, and a stride
  // larger than the kernel on one side, with several windows per row.
  Tensor x = zeros({2, 3, 9, 11}, kFloat32);
  float* cells = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i)
    cells[i] = static_cast<float>((i * 37 + i / 7) % 4);
  const int64_t kh = 2, kw = 3, sh = 3, sw = 1, out_h = 3, out_w = 9;
  auto [out, idx] = max_pool2d_with_indices(x, {kh, kw}, ExpandingArray<2>{sh, sw});
  ASSERT_EQ(out.sizes(), (IntList{2, 3, out_h, out_w}));
  for (int64_t plane = 0; plane < 6; ++plane) {
    const float* image = cells + plane * 9 * 11;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      for (int64_t ow = 0; ow < out_w; ++ow) {
        int64_t best = oh * sh * 11 + ow * sw;
        for (int64_t h = oh * sh; h < oh * sh + kh; ++h) {
          for (int64_t w = ow * sw; w < ow * sw + kw; ++w) {
            if (image[h * 11 + w] > image[best]) best = h * 11 + w;
          }
        }
        const int64_t o = plane * out_h * out_w + oh * out_w + ow;
        EXPECT_EQ(idx.data_ptr<int64_t>()[o], best)
            << "plane " << plane << " (" << oh << ", " << ow << ")";
        EXPECT_EQ(out.data_ptr<float>()[o], image[best]);
      }
    }
  }
}

TEST(MaxPool2d, GradientGoesToEachWindowsMaximum) {
  // The centre is the maximum of all four overlapping 2x2 windows.
  Tensor x = zeros({1, 1, 3, 3}, kFloat64);
  x.data_ptr<double>()[4] = 10;
  x.requires_grad_();
  max_pool2d(x, 2, 1).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), image({0, 0, 0, 0, 4, 0, 0, 0, 0}, 3, 3)));
}

TEST(MaxPool2d, UnbatchedAndMultiChannel) {
  Tensor x = arange(2 * 4 * 4, kFloat64).view({2, 4, 4});
  Tensor y = max_pool2d(x, 2);
  EXPECT_EQ(y.sizes(), (IntList{2, 2, 2}));
  EXPECT_TRUE(all_close(y[1], from_values({21, 23, 29, 31}, {2, 2})));
  EXPECT_TRUE(all_close(max_pool2d(x.unsqueeze(0), 2).squeeze(0), y, 0, 0));
}

TEST(AvgPool2d, Values) {
  EXPECT_TRUE(all_close(avg_pool2d(ramp(4, 4), 2), image({2.5, 4.5, 10.5, 12.5}, 2, 2)));
  Tensor g = ones({1, 1, 3, 3}, kFloat64);
  // Padding 1 around a 3x3 image of ones: corner windows hold 4 image
  // cells, edge windows 6, the centre 9.
  EXPECT_TRUE(all_close(
      avg_pool2d(g, 3, 1, 1),
      image({4. / 9, 6. / 9, 4. / 9, 6. / 9, 1, 6. / 9, 4. / 9, 6. / 9, 4. / 9}, 3, 3)));
  EXPECT_TRUE(all_close(avg_pool2d(g, 3, 1, 1, false, /*count_include_pad=*/false),
                        ones({1, 1, 3, 3}, kFloat64)));
  EXPECT_TRUE(all_close(avg_pool2d(g, 3, 1, 1, false, true, /*divisor_override=*/2),
                        image({2, 3, 2, 3, 4.5, 3, 2, 3, 2}, 3, 3)));
}

TEST(AvgPool2d, CeilModeDividesByTheClippedWindow) {
  // 5x5 ramp, k 2, s 2, ceil: the last column's windows cover one column
  // (their size counts only up to the image plus padding, here none).
  Tensor out = avg_pool2d(ramp(5, 5), 2, {}, 0, /*ceil_mode=*/true);
  EXPECT_TRUE(all_close(out,
                        image({3,
                               5,
                               (4 + 9) / 2.0,
                               13,
                               15,
                               (14 + 19) / 2.0,
                               (20 + 21) / 2.0,
                               (22 + 23) / 2.0,
                               24},
                              3,
                              3)));
}

TEST(AvgPool2d, GradientSpreadsOverTheWindow) {
  Tensor x = ramp(4, 4).requires_grad_();
  avg_pool2d(x, 2).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), full({1, 1, 4, 4}, 0.25, kFloat64)));
  // Overlapping windows add up: k 3, s 1, p 1 with count_include_pad, so
  // each cell gets 1/9 from each window that covers it.
  Tensor y = ones({1, 1, 3, 3}, kFloat64).requires_grad_();
  avg_pool2d(y, 3, 1, 1).sum().backward();
  EXPECT_TRUE(all_close(y.grad(), image({4, 6, 4, 6, 9, 6, 4, 6, 4}, 3, 3) / 9));
}

TEST(Pool2d, Errors) {
  Tensor x = zeros({2, 3, 8, 8});
  EXPECT_TRUE(throws_with(
      [&] {
        max_pool2d(x, {0, 2});
      },
      "max_pool2d: kernel_size must be positive, got [0, 2]"));
  EXPECT_TRUE(throws_with([&] { max_pool2d(x, 2, 0); },
                          "max_pool2d: stride must be positive, got [0, 0]"));
  EXPECT_TRUE(throws_with([&] { max_pool2d(x, 2, 2, 0, 0); },
                          "max_pool2d: dilation must be positive, got [0, 0]"));
  EXPECT_TRUE(throws_with([&] { avg_pool2d(x, 2, 2, -1); },
                          "avg_pool2d: padding must be non-negative, got [-1, -1]"));
  EXPECT_TRUE(
      throws_with([&] { max_pool2d(x, 3, 1, 2); },
                  "max_pool2d: padding should be at most half of the kernel size, "
                  "got padding [2, 2] for kernel_size [3, 3]"));
  EXPECT_TRUE(throws_with(
      [&] {
        max_pool2d(zeros({1, 1, 2, 2}), 3);
      },
      "max_pool2d: the window (kernel_size [3, 3], dilation [1, 1]) does "
      "not fit in the input of shape [1, 1, 2, 2] with padding [0, 0]: "
      "the output would have shape [1, 1, 0, 0]"));
  EXPECT_TRUE(throws_with(
      [&] {
        avg_pool2d(zeros({8, 8}), 2);
      },
      "avg_pool2d: expected a 3-D [C, H, W] (unbatched) or 4-D "
      "[N, C, H, W] (batched) input, got shape [8, 8]"));
  EXPECT_TRUE(throws_with(
      [&] {
        max_pool2d(zeros({2, 3, 0, 8}), 2);
      },
      "max_pool2d: expected an input with non-empty channel and spatial "
      "dims, got shape [2, 3, 0, 8]"));
  EXPECT_TRUE(throws_with([&] { avg_pool2d(x, 2, {}, 0, false, true, 0); },
                          "avg_pool2d: divisor_override must not be zero"));
  EXPECT_TRUE(throws_with(
      [&] {
        max_pool2d(zeros({2, 3, 8, 8}, kInt64), 2);
      },
      "max_pool2d: expected 'input' to be float32 or float64"));
}

TEST(Pool2d, EmptyBatch) {
  Tensor x = zeros({0, 3, 8, 8}).requires_grad_();
  EXPECT_EQ(max_pool2d(x, 2).sizes(), (IntList{0, 3, 4, 4}));
  Tensor y = avg_pool2d(x, 2);
  EXPECT_EQ(y.sizes(), (IntList{0, 3, 4, 4}));
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
}

// Padding with dilation can leave a window with no input cell at all
// (height 2, kernel 2, padding 1, dilation 3: taps at -1 and 2). Its output
// is -inf with index -1, and backward leaves the input's gradient alone
// rather than writing outside the image.
TEST(MaxPool2d, AWindowWithNoInputCellIsMinusInfinityAndGetsNoGradient) {
  Tensor x = ones({2, 1, 2, 2}).requires_grad_();
  auto [out, idx] = max_pool2d_with_indices(x, 2, 2, 1, 3);
  ASSERT_EQ(out.sizes(), IntList({2, 1, 1, 1}));
  EXPECT_EQ(out.flatten()[0].item<double>(), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(idx.flatten()[0].item<int64_t>(), -1);
  max_pool2d(x, 2, 2, 1, 3).sum().backward();
  EXPECT_TRUE(all_close(x.grad(), zeros({2, 1, 2, 2})));
}

}  // namespace
}  // namespace tandem
