// Issue 22's layers as modules: Conv1d, MaxPool1d, AvgPool1d,
// AdaptiveAvgPool2d, AdaptiveMaxPool2d, GroupNorm, InstanceNorm2d,
// BatchNorm3d, Upsample and Dropout2d. Options and their defaults,
// parameters and PyTorch's initialisation, printing, forward as the op and
// as nn::functional, adaptive windows against a naive loop, and errors that
// name the layer and the shapes. Values against PyTorch are in
// tests/parity/norms_pooling_test.cpp.
#include <cmath>
#include <limits>
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

namespace F = nn::functional;
using testing::all_close;
using testing::throws_with;

template <typename T>
std::string printed(const T& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

// ---- Conv1d ----

TEST(Conv1dLayer, ParametersAndPyTorchInitialisation) {
  manual_seed(0);
  nn::Conv1d conv(nn::Conv1dOptions(4, 6, 5).groups(2));
  EXPECT_EQ(conv->weight.sizes(), (IntList{6, 2, 5}));
  EXPECT_EQ(conv->bias.sizes(), (IntList{6}));
  EXPECT_EQ(conv->state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  // fan_in = 4 / 2 * 5 = 10: weight and bias both from U(-1/sqrt(10), ..).
  nn::Conv1d wide(10, 64, 1);
  const double bound = 1.0 / std::sqrt(10.0);
  EXPECT_LE(max(abs(wide->weight)).item<double>(), bound);
  EXPECT_GT(max(wide->weight).item<double>(), 0.8 * bound);
  EXPECT_LE(max(abs(wide->bias)).item<double>(), bound);
  nn::Conv1d plain(nn::Conv1dOptions(2, 3, 3).bias(false));
  EXPECT_FALSE(plain->bias.defined());
  EXPECT_EQ(plain->parameters().size(), 1u);
}

TEST(Conv1dLayer, ForwardIsTheOpAndAPlainSum) {
  nn::Conv1d conv(nn::Conv1dOptions(2, 3, 3).stride(2).padding(1).dilation(2));
  Tensor x = randn({2, 2, 9}, kFloat64);
  conv->to(kFloat64);
  Tensor y = conv->forward(x);
  EXPECT_EQ(y.sizes(), (IntList{2, 3, 4}));
  EXPECT_TRUE(all_close(
      y,
      F::conv1d(x,
                conv->weight,
                F::Conv1dFuncOptions().bias(conv->bias).stride(2).padding(1).dilation(2)),
      0,
      0));
  // y[n, o, l] = b[o] + sum_c sum_k w[o, c, k] * x[n, c, 2 l - 1 + 2 k].
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t o = 0; o < 3; ++o) {
      for (int64_t l = 0; l < 4; ++l) {
        double want = conv->bias[o].item<double>();
        for (int64_t c = 0; c < 2; ++c) {
          for (int64_t k = 0; k < 3; ++k) {
            const int64_t at = 2 * l - 1 + 2 * k;
            if (at < 0 || at >= 9) continue;
            want += conv->weight[o][c][k].item<double>() * x[n][c][at].item<double>();
          }
        }
        EXPECT_NEAR(y[n][o][l].item<double>(), want, 1e-12) << n << " " << o << " " << l;
      }
    }
  }
  // Unbatched [C, L].
  EXPECT_EQ(conv->forward(randn({2, 9}, kFloat64)).sizes(), (IntList{3, 4}));
}

TEST(Conv1dLayer, PrintsAsLibTorch) {
  EXPECT_EQ(printed(nn::Conv1d(16, 32, 5)),
            "Conv1d(16, 32, kernel_size=[5], stride=[1])");
  EXPECT_EQ(
      printed(nn::Conv1d(
          nn::Conv1dOptions(4, 8, 3).stride(2).padding(1).dilation(2).groups(2).bias(
              false))),
      "Conv1d(4, 8, kernel_size=[3], stride=[2], padding=[1], dilation=[2], "
      "groups=2, bias=false)");
}

TEST(Conv1dLayer, ErrorsNameTheLayerAndShapes) {
  EXPECT_TRUE(throws_with([] { nn::Conv1d(nn::Conv1dOptions(4, 6, 3).groups(4)); },
                          "Conv1d: groups=4 must divide in_channels (4) and "
                          "out_channels (6)"));
  nn::Conv1d conv(3, 4, 3);
  EXPECT_TRUE(throws_with(
      [&] {
        conv->forward(randn({1, 3, 5, 5}));
      },
      "Conv1d: expected a 2-D [C, L] (unbatched) or 3-D [N, C, L] "
      "(batched) input, got shape [1, 3, 5, 5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv->forward(randn({2, 5, 8}));
      },
      "conv1d: input of shape [2, 5, 8] has 5 channels, but weight "
      "of shape [4, 3, 3] with groups=1 expects 3"));
  EXPECT_TRUE(throws_with(
      [&] {
        conv->forward(randn({2, 3, 2}));
      },
      "conv1d: the kernel (size 3, dilation 1) is longer than the "
      "padded input"));
}

// ---- MaxPool1d / AvgPool1d ----

TEST(Pool1dLayers, DefaultsForwardAndIndices) {
  nn::MaxPool1d pool(2);
  EXPECT_EQ(pool->options.stride(), ExpandingArray<1>(2));
  Tensor x = tensor({1.0, 5.0, 3.0, 2.0, -1.0, 4.0, 0.0}).view({1, 1, 7});
  auto [values, indices] = pool->forward_with_indices(x);
  EXPECT_TRUE(all_close(values, tensor({5.0, 3.0, 4.0}).view({1, 1, 3}), 0, 0));
  EXPECT_TRUE(equal(indices, tensor<int64_t>({1, 2, 5}, kInt64).view({1, 1, 3})));
  EXPECT_TRUE(all_close(pool->forward(x), values, 0, 0));
  nn::AvgPool1d avg(
      nn::AvgPool1dOptions(3).stride(2).padding(1).count_include_pad(false));
  // Windows [-1, 1], [1, 3], [3, 5], [5, 7]: the padding cells do not count.
  EXPECT_TRUE(all_close(avg->forward(x),
                        tensor({3.0, 10.0 / 3, 5.0 / 3, 2.0}).view({1, 1, 4}),
                        1e-6,
                        1e-6));
  EXPECT_TRUE(all_close(F::avg_pool1d(x, F::AvgPool1dFuncOptions(3).stride(2).padding(1)),
                        tensor({2.0, 10.0 / 3, 5.0 / 3, 4.0 / 3}).view({1, 1, 4}),
                        1e-6,
                        1e-6));
  // Unbatched [C, L].
  EXPECT_EQ(pool->forward(randn({3, 7})).sizes(), (IntList{3, 3}));
}

TEST(Pool1dLayers, PrintAndErrors) {
  EXPECT_EQ(printed(nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).ceil_mode(true))),
            "MaxPool1d(kernel_size=[3], stride=[2], padding=[0], dilation=[1], "
            "ceil_mode=true)");
  EXPECT_EQ(printed(nn::AvgPool1d(2)),
            "AvgPool1d(kernel_size=[2], stride=[2], padding=[0])");
  nn::MaxPool1d pool(nn::MaxPool1dOptions(2).padding(2));
  EXPECT_TRUE(throws_with(
      [&] {
        pool->forward(randn({2, 3, 8}));
      },
      "max_pool1d: padding should be at most half of the kernel "
      "size, got padding 2 for kernel_size 2"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::AvgPool1d(2)->forward(randn({2, 3, 4, 4}));
      },
      "AvgPool1d: expected a 2-D [C, L] (unbatched) or 3-D "
      "[N, C, L] (batched) input, got shape [2, 3, 4, 4]"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::MaxPool1d(5)->forward(randn({2, 3, 4}));
      },
      "max_pool1d: the window (kernel_size 5, dilation 1) does not "
      "fit in the input of shape [2, 3, 4]"));
}

// ---- adaptive pooling ----

// PyTorch's window along a dim of n cells pooled to o.
int64_t window_start(int64_t i, int64_t n, int64_t o) { return i * n / o; }
int64_t window_end(int64_t i, int64_t n, int64_t o) { return ((i + 1) * n + o - 1) / o; }

TEST(AdaptivePooling, WindowsMatchANaiveLoop) {
  for (auto [h, w, oh, ow] : {std::array<int64_t, 4>{5, 7, 3, 4},
                              {7, 11, 2, 5},
                              {3, 2, 4, 3},
                              {6, 4, 3, 2},
                              {5, 4, 1, 1}}) {
    Tensor x = randn({2, 3, h, w}, kFloat64);
    Tensor avg = adaptive_avg_pool2d(x, {oh, ow});
    auto [mx, idx] = adaptive_max_pool2d_with_indices(x, {oh, ow});
    ASSERT_EQ(avg.sizes(), (IntList{2, 3, oh, ow}));
    for (int64_t p = 0; p < 6; ++p) {
      const Tensor plane = x[p / 3][p % 3];
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          double sum = 0, best = -std::numeric_limits<double>::infinity();
          int64_t best_at = -1, count = 0;
          for (int64_t a = window_start(i, h, oh); a < window_end(i, h, oh); ++a) {
            for (int64_t b = window_start(j, w, ow); b < window_end(j, w, ow); ++b) {
              const double v = plane[a][b].item<double>();
              sum += v;
              ++count;
              if (v > best) {
                best = v;
                best_at = a * w + b;
              }
            }
          }
          const std::string at = detail::str(h, "x", w, "->", oh, "x", ow);
          EXPECT_NEAR(avg[p / 3][p % 3][i][j].item<double>(), sum / count, 1e-12) << at;
          EXPECT_EQ(mx[p / 3][p % 3][i][j].item<double>(), best) << at;
          EXPECT_EQ(idx[p / 3][p % 3][i][j].item<int64_t>(), best_at) << at;
        }
      }
    }
  }
}

TEST(AdaptivePooling, ModulesFunctionalAndGlobalPooling) {
  Tensor x = randn({2, 3, 6, 5});
  nn::AdaptiveAvgPool2d head(1);
  EXPECT_TRUE(all_close(head->forward(x), mean(x, {2, 3}, true), 1e-6, 1e-7));
  nn::AdaptiveMaxPool2d global(1);
  auto [values, indices] = global->forward_with_indices(x);
  auto [want, where] = max(x.reshape({2, 3, 30}), 2, true);
  EXPECT_TRUE(all_close(values, want.view({2, 3, 1, 1}), 0, 0));
  EXPECT_TRUE(equal(indices, where.view({2, 3, 1, 1})));
  nn::AdaptiveMaxPool2d pool(ExpandingArray<2>({4, 3}));
  EXPECT_TRUE(
      all_close(pool->forward(x),
                F::adaptive_max_pool2d(x, F::AdaptiveMaxPool2dFuncOptions({4, 3})),
                0,
                0));
  EXPECT_TRUE(
      all_close(nn::AdaptiveAvgPool2d(ExpandingArray<2>({4, 3}))->forward(x),
                F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({4, 3})),
                0,
                0));
  // Unbatched [C, H, W].
  EXPECT_EQ(pool->forward(randn({3, 7, 7})).sizes(), (IntList{3, 4, 3}));
}

TEST(AdaptivePooling, PrintAndErrors) {
  EXPECT_EQ(printed(nn::AdaptiveAvgPool2d(1)), "AdaptiveAvgPool2d(output_size=[1, 1])");
  EXPECT_EQ(printed(nn::AdaptiveMaxPool2d(ExpandingArray<2>({5, 7}))),
            "AdaptiveMaxPool2d(output_size=[5, 7])");
  EXPECT_TRUE(throws_with(
      [] {
        nn::AdaptiveAvgPool2d(ExpandingArray<2>({0, 2}));
      },
      "AdaptiveAvgPool2d: output_size must be positive, got [0, 2]"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::AdaptiveMaxPool2d(2)->forward(randn({4, 4}));
      },
      "AdaptiveMaxPool2d: expected a 3-D [C, H, W] (unbatched) or "
      "4-D [N, C, H, W] (batched) input, got shape [4, 4]"));
  EXPECT_TRUE(throws_with(
      [] {
        adaptive_avg_pool2d(randn({2, 0, 4, 4}), 2);
      },
      "adaptive_avg_pool2d: expected input with non-zero sizes in "
      "its non-batch dims, got shape [2, 0, 4, 4]"));
}

// ---- GroupNorm ----

TEST(GroupNormLayer, ParametersNormalisationAndPrinting) {
  nn::GroupNorm gn(2, 6);
  EXPECT_TRUE(equal(gn->weight, ones({6})));
  EXPECT_TRUE(equal(gn->bias, zeros({6})));
  EXPECT_EQ(gn->state_dict().keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(printed(gn), "GroupNorm(2, 6, eps=1e-05, affine=true)");
  nn::GroupNorm plain(nn::GroupNormOptions(3, 6).affine(false).eps(1e-3));
  EXPECT_EQ(plain->parameters().size(), 0u);
  EXPECT_EQ(printed(plain), "GroupNorm(3, 6, eps=0.001, affine=false)");
  // Each sample's group of 3 channels x 4 x 4 has mean 0 and variance ~1.
  Tensor x = randn({2, 6, 4, 4}, kFloat64) * 3 + 1;
  gn->to(kFloat64);
  Tensor y = gn->forward(x).reshape({2, 2, 48});
  EXPECT_TRUE(all_close(mean(y, {2}), zeros({2, 2}, kFloat64), 0, 1e-12));
  EXPECT_TRUE(all_close(mean(y * y, {2}), full({2, 2}, 1.0, kFloat64), 1e-4, 1e-4));
  // weight and bias act per channel.
  {
    NoGradGuard no_grad;
    gn->weight.fill_(2);
    gn->bias.fill_(0.5);
  }
  EXPECT_TRUE(all_close(gn->forward(x).reshape({2, 2, 48}), y * 2 + 0.5, 1e-12, 1e-12));
}

TEST(GroupNormLayer, Errors) {
  EXPECT_TRUE(
      throws_with([] { nn::GroupNorm(4, 6); },
                  "GroupNorm: num_channels (6) must be divisible by num_groups (4)"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::GroupNorm(2, 6)->forward(randn({2, 4, 3}));
      },
      "GroupNorm: expected an input [N, 6, ...], got shape [2, 4, 3]"));
  EXPECT_TRUE(throws_with(
      [] {
        group_norm(randn({2, 6, 3}), 4);
      },
      "group_norm: num_groups=4 must be positive and divide the 6 "
      "channels of input of shape [2, 6, 3]"));
}

// ---- InstanceNorm2d ----

TEST(InstanceNorm2dLayer, DefaultsAsPyTorch) {
  nn::InstanceNorm2d in(3);
  EXPECT_FALSE(in->options.affine());
  EXPECT_FALSE(in->options.track_running_stats());
  EXPECT_EQ(in->options.momentum(), 0.1);
  EXPECT_EQ(in->parameters().size(), 0u);
  EXPECT_EQ(in->buffers().size(), 0u);
  EXPECT_EQ(printed(in),
            "InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=false, "
            "track_running_stats=false)");
  // Every (sample, channel) plane: mean 0, variance ~1, in both modes.
  Tensor x = randn({2, 3, 5, 5}, kFloat64) * 2 - 1;
  for (bool training : {true, false}) {
    in->train(training);
    Tensor y = in->forward(x).reshape({6, 25});
    EXPECT_TRUE(all_close(mean(y, {1}), zeros({6}, kFloat64), 0, 1e-12));
    EXPECT_TRUE(all_close(mean(y * y, {1}), ones({6}, kFloat64), 1e-4, 1e-4));
  }
  // Unbatched [C, H, W] is one sample.
  EXPECT_TRUE(all_close(in->forward(x[1]), in->forward(x).select(0, 1), 1e-12, 1e-12));
}

TEST(InstanceNorm2dLayer, RunningStatisticsAreTheBatchAverage) {
  nn::InstanceNorm2d in(
      nn::InstanceNorm2dOptions(2).affine(true).track_running_stats(true).momentum(0.5));
  in->to(kFloat64);
  EXPECT_EQ(
      in->named_buffers().keys(),
      (std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(in->state_dict().size(), 5u);
  Tensor x = randn({3, 2, 4, 4}, kFloat64) + 2;
  in->forward(x);
  // Per plane: mean and unbiased variance; averaged over the 3 samples.
  Tensor planes = x.reshape({3, 2, 16});
  Tensor m = mean(planes, {2});
  Tensor centred = planes - m.unsqueeze(2);
  Tensor var = sum(centred * centred, {2}) / 15;
  EXPECT_TRUE(all_close(in->running_mean, mean(m, {0}) * 0.5, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(in->running_var, mean(var, {0}) * 0.5 + 0.5, 1e-12, 1e-12));
  EXPECT_EQ(in->num_batches_tracked.item<int64_t>(), 0);  // as PyTorch's
  // Eval: the running statistics normalise.
  in->eval();
  const Tensor before = in->running_mean.clone();
  Tensor y = in->forward(x);
  Tensor want = (x - in->running_mean.view({1, 2, 1, 1})) /
                sqrt(in->running_var.view({1, 2, 1, 1}) + 1e-5);
  EXPECT_TRUE(all_close(y, want, 1e-12, 1e-12));
  EXPECT_TRUE(equal(in->running_mean, before));
}

TEST(InstanceNorm2dLayer, Errors) {
  nn::InstanceNorm2d in(nn::InstanceNorm2dOptions(3).affine(true));
  EXPECT_TRUE(throws_with(
      [&] {
        in->forward(randn({2, 3, 4}));
      },
      "InstanceNorm2d: expected input with 3 channels "
      "(num_features), got shape [2, 3, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        in->forward(randn({3, 4}));
      },
      "InstanceNorm2d: expected a 3-D [C, H, W] (unbatched) or 4-D "
      "[N, C, H, W] (batched) input, got shape [3, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        in->forward(randn({2, 3, 1, 1}));
      },
      "instance_norm: expected more than 1 spatial element when "
      "training, got input of shape [2, 3, 1, 1]"));
}

// ---- BatchNorm3d ----

TEST(BatchNorm3dLayer, FiveDimensionalInput) {
  nn::BatchNorm3d bn(3);
  EXPECT_EQ(printed(bn),
            "BatchNorm3d(3, eps=1e-05, momentum=0.1, affine=true, "
            "track_running_stats=true)");
  Tensor x = randn({2, 3, 2, 3, 4}, kFloat64);
  bn->to(kFloat64);
  Tensor y = bn->forward(x);
  nn::BatchNorm2d flat(3);
  flat->to(kFloat64);
  EXPECT_TRUE(all_close(
      y, flat->forward(x.reshape({2, 3, 6, 4})).reshape(x.sizes()), 1e-12, 1e-12));
  EXPECT_TRUE(all_close(bn->running_var, flat->running_var, 1e-12, 1e-12));
  EXPECT_TRUE(throws_with(
      [&] {
        bn->forward(randn({2, 3, 4, 4}, kFloat64));
      },
      "BatchNorm3d: expected a 5-D [N, C, D, H, W] input, got shape "
      "[2, 3, 4, 4]"));
}

// ---- Upsample / interpolate ----

TEST(UpsampleLayer, NearestAndBilinear) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}).view({1, 1, 2, 2});
  nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2}));
  EXPECT_EQ(printed(up), "Upsample(scale_factor=[2], mode=kNearest)");
  Tensor want = tensor({1.0,
                        1.0,
                        2.0,
                        2.0,
                        1.0,
                        1.0,
                        2.0,
                        2.0,
                        3.0,
                        3.0,
                        4.0,
                        4.0,
                        3.0,
                        3.0,
                        4.0,
                        4.0})
                    .view({1, 1, 4, 4});
  EXPECT_TRUE(all_close(up->forward(x), want, 0, 0));
  nn::Upsample corners(nn::UpsampleOptions()
                           .size(std::vector<int64_t>{3, 3})
                           .mode(kBilinear)
                           .align_corners(true));
  EXPECT_EQ(printed(corners), "Upsample(size=[3, 3], mode=kBilinear)");
  // align_corners: the corners are the input's, the centre their mean.
  EXPECT_TRUE(
      all_close(corners->forward(x),
                tensor({1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 3.0, 3.5, 4.0}).view({1, 1, 3, 3}),
                1e-6,
                1e-6));
  // Without: output cell centres map to (o + 0.5) / 2 - 0.5, clamped at 0.
  Tensor y = F::interpolate(x,
                            F::InterpolateFuncOptions()
                                .scale_factor(std::vector<double>{2})
                                .mode(kBilinear)
                                .align_corners(false));
  EXPECT_TRUE(all_close(
      y.select(2, 0), tensor({1.0, 1.25, 1.75, 2.0}).view({1, 1, 4}), 1e-6, 1e-6));
}

TEST(UpsampleLayer, ArgumentErrors) {
  Tensor x = randn({1, 2, 3, 3});
  EXPECT_TRUE(throws_with(
      [&] {
        F::interpolate(x,
                       F::InterpolateFuncOptions()
                           .size(std::vector<int64_t>{4, 4})
                           .scale_factor(std::vector<double>{2}));
      },
      "interpolate: only one of size or scale_factor should be defined"));
  EXPECT_TRUE(throws_with([&] { F::interpolate(x); },
                          "interpolate: either size or scale_factor should be defined"));
  EXPECT_TRUE(throws_with(
      [&] {
        F::interpolate(x,
                       F::InterpolateFuncOptions()
                           .size(std::vector<int64_t>{4})
                           .align_corners(true));
      },
      "interpolate: align_corners option can only be set with the interpolating modes"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2}))
            ->forward(randn({2, 3, 4}));
      },
      "Upsample: expected a 4-D [N, C, H, W] input, got shape [2, 3, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        F::interpolate(
            x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{0.2}));
      },
      "interpolate: the output size [0, 0] must be positive"));
}

// ---- Dropout2d ----

TEST(Dropout2dLayer, WholeChannelsScaledAndSeeded) {
  nn::Dropout2d drop(0.4);
  EXPECT_EQ(printed(drop), "Dropout2d(p=0.4)");
  EXPECT_EQ(nn::Dropout2d()->options.p(), 0.5);
  Tensor x = ones({8, 16, 3, 3}, kFloat64);
  manual_seed(7);
  Tensor y = drop->forward(x);
  // Each [3, 3] plane is all 0 or all 1 / (1 - p).
  Tensor first = y.select(3, 0).select(2, 0);  // [8, 16]
  EXPECT_TRUE(all_close(y, first.reshape({8, 16, 1, 1}).expand({8, 16, 3, 3}), 0, 0));
  const Tensor kept = first.ne(0.0);
  EXPECT_TRUE(all_close(first * kept.to(kFloat64), kept.to(kFloat64) / 0.6, 1e-12, 0));
  const double zeroed = 1 - mean(kept.to(kFloat64)).item<double>();
  EXPECT_GT(zeroed, 0.2);
  EXPECT_LT(zeroed, 0.6);
  // The default generator, drawn as dropout draws: one value per channel.
  manual_seed(7);
  EXPECT_TRUE(all_close(first, dropout(ones({8, 16}, kFloat64), 0.4, true), 0, 0));
  manual_seed(7);
  EXPECT_TRUE(equal(drop->forward(x), y));
  // Eval mode and p = 0: the identity; unbatched [C, H, W] masks channels.
  drop->eval();
  EXPECT_TRUE(equal(drop->forward(x), x));
  EXPECT_TRUE(equal(F::dropout2d(x, F::Dropout2dFuncOptions().p(0.0)), x));
  Tensor u = F::dropout2d(ones({32, 2, 2}), F::Dropout2dFuncOptions().p(0.5));
  EXPECT_TRUE(all_close(
      u, u.select(2, 0).select(1, 0).reshape({32, 1, 1}).expand({32, 2, 2}), 0, 0));
}

TEST(Dropout2dLayer, Errors) {
  EXPECT_TRUE(
      throws_with([] { nn::Dropout2d(1.5); },
                  "Dropout2d: probability has to be between 0 and 1, but got 1.5"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::Dropout2d(0.5)->forward(randn({4, 5}));
      },
      "Dropout2d: expected a 3-D [C, H, W] (unbatched) or 4-D "
      "[N, C, H, W] (batched) input, got shape [4, 5]"));
}

}  // namespace
}  // namespace tandem
