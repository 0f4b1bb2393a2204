// The CNN layers: Conv2d, MaxPool2d, AvgPool2d, BatchNorm1d/2d and
// LayerNorm. Parameters, buffers and state_dict keys as PyTorch names them,
// initialisation, train/eval behaviour, printing, cloning, errors, and a
// small CNN trained a step through the functional and module forms.
#include <cmath>
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

std::vector<std::string> keys_of(const OrderedDict<std::string, Tensor>& dict) {
  return dict.keys();
}

TEST(Conv2dLayer, ParametersAndPyTorchInitialisation) {
  manual_seed(0);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 2}).groups(2));
  EXPECT_EQ(conv->weight.sizes(), (IntList{6, 2, 3, 2}));
  EXPECT_EQ(conv->bias.sizes(), (IntList{6}));
  EXPECT_EQ(keys_of(conv->state_dict()), (std::vector<std::string>{"weight", "bias"}));
  // kaiming_uniform_(a=sqrt(5)) and the bias both draw from
  // U(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 2 * 3 * 2.
  const double bound = 1 / std::sqrt(12.0);
  for (const Tensor& p : {conv->weight, conv->bias}) {
    EXPECT_LE(max(p).item<double>(), bound);
    EXPECT_GE(min(p).item<double>(), -bound);
  }
  nn::Conv2d no_bias(nn::Conv2dOptions(1, 2, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
}

TEST(Conv2dLayer, ForwardIsTheOp) {
  nn::Conv2d conv(nn::Conv2dOptions(2, 3, 3).stride(2).padding(1).dilation({1, 2}));
  Tensor x = randn({2, 2, 9, 9});
  Tensor y = conv->forward(x);
  EXPECT_EQ(y.sizes(), (IntList{2, 3, 5, 4}));
  EXPECT_TRUE(all_close(y, conv2d(x, conv->weight, conv->bias, 2, 1, {1, 2}), 0, 0));
  EXPECT_TRUE(all_close(
      F::conv2d(
          x,
          conv->weight,
          F::Conv2dFuncOptions().bias(conv->bias).stride(2).padding(1).dilation({1, 2})),
      y,
      0,
      0));
}

TEST(Conv2dLayer, Errors) {
  EXPECT_TRUE(
      throws_with([] { nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)); },
                  "Conv2d: groups=4 must divide in_channels (4) and out_channels (6)"));
  EXPECT_TRUE(
      throws_with([] { nn::Conv2d(0, 6, 3); },
                  "Conv2d: in_channels and out_channels must be positive, got 0 and 6"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::Conv2d(nn::Conv2dOptions(1, 6, {3, 0}));
      },
      "Conv2d: kernel_size must be positive, got [3, 0]"));
  nn::Conv2d conv(3, 8, 3);
  // Shape errors come from the op and name it.
  EXPECT_TRUE(throws_with(
      [&] {
        conv->forward(zeros({2, 1, 28, 28}));
      },
      "conv2d: input of shape [2, 1, 28, 28] has 1 channels"));
}

TEST(PoolingLayers, ForwardAndOptions) {
  nn::MaxPool2d pool(2);
  EXPECT_EQ(pool->options.stride(), ExpandingArray<2>(2));
  Tensor x = randn({2, 3, 8, 8});
  EXPECT_TRUE(all_close(pool->forward(x), max_pool2d(x, 2), 0, 0));
  auto [values, indices] = pool->forward_with_indices(x);
  EXPECT_EQ(indices.dtype(), kInt64);
  EXPECT_TRUE(all_close(values, F::max_pool2d(x, F::MaxPool2dFuncOptions(2)), 0, 0));

  nn::AvgPool2d avg(
      nn::AvgPool2dOptions(3).stride(1).padding(1).count_include_pad(false));
  EXPECT_TRUE(all_close(avg->forward(x), avg_pool2d(x, 3, 1, 1, false, false), 0, 0));
  EXPECT_TRUE(all_close(
      F::avg_pool2d(
          x, F::AvgPool2dFuncOptions(3).stride(1).padding(1).count_include_pad(false)),
      avg->forward(x),
      0,
      0));
  EXPECT_TRUE(pool->parameters().empty());
}

TEST(BatchNormLayer, StateDictKeysAndBuffers) {
  nn::BatchNorm2d bn(3);
  EXPECT_EQ(keys_of(bn->state_dict()),
            (std::vector<std::string>{
                "weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(
      keys_of(bn->named_buffers()),
      (std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_TRUE(all_close(bn->weight, ones({3})));
  EXPECT_TRUE(all_close(bn->bias, zeros({3})));
  EXPECT_TRUE(all_close(bn->running_var, ones({3})));
  // Converting the dtype leaves the integer counter alone, as PyTorch.
  bn->to(kFloat64);
  EXPECT_EQ(bn->running_mean.dtype(), kFloat64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);

  nn::BatchNorm1d bare(nn::BatchNormOptions(4).affine(false).track_running_stats(false));
  EXPECT_TRUE(bare->state_dict().is_empty());
}

TEST(BatchNormLayer, TrainThenEval) {
  nn::BatchNorm2d bn(2);
  Generator gen(3);
  Tensor x = randn({4, 2, 3, 3}, gen) * 3 + 2;
  Tensor y = bn->forward(x);
  EXPECT_TRUE(all_close(y, batch_norm(x, {}, {}, {}, {}, true), 1e-6, 1e-6));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  bn->forward(x);
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  // Two steps of momentum 0.1 from 0: 0.19 of the batch mean.
  Tensor batch_mean = mean(x, {0, 2, 3});
  EXPECT_TRUE(all_close(bn->running_mean, batch_mean * 0.19, 1e-5, 1e-6));

  bn->eval();
  const Tensor running_mean = bn->running_mean.clone();
  Tensor z = bn->forward(x);
  EXPECT_TRUE(equal(bn->running_mean, running_mean));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  EXPECT_TRUE(all_close(
      z, batch_norm(x, bn->running_mean, bn->running_var, bn->weight, bn->bias), 0, 0));
}

TEST(BatchNormLayer, CumulativeAverageWithoutMomentum) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(2).momentum(std::nullopt));
  Tensor a = randn({5, 2}), b = randn({5, 2});
  bn->forward(a);
  bn->forward(b);
  // Batch k weighs 1/k: after two batches, the plain average.
  EXPECT_TRUE(all_close(bn->running_mean, (mean(a, {0}) + mean(b, {0})) / 2, 1e-5, 1e-6));
}

TEST(BatchNormLayer, WithoutRunningStatisticsEvalUsesTheBatch) {
  nn::BatchNorm1d bn(nn::BatchNormOptions(3).track_running_stats(false));
  bn->eval();
  Tensor x = randn({6, 3, 4});
  EXPECT_TRUE(
      all_close(bn->forward(x), batch_norm(x, {}, {}, bn->weight, bn->bias, true)));
}

TEST(BatchNormLayer, Errors) {
  EXPECT_TRUE(throws_with(
      [] {
        nn::BatchNorm2d(2)->forward(zeros({4, 2}));
      },
      "BatchNorm2d: expected a 4-D [N, C, H, W] input, got shape [4, 2]"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::BatchNorm1d(2)->forward(zeros({4, 2, 3, 3}));
      },
      "BatchNorm1d: expected a 2-D [N, C] or 3-D [N, C, L] input"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::BatchNorm2d(3)->forward(zeros({4, 2, 3, 3}));
      },
      "batch_norm: expected running_mean of shape [2] (one value per "
      "channel of input of shape [4, 2, 3, 3]), got [3]"));
  EXPECT_TRUE(throws_with([] { nn::BatchNorm1d(0); },
                          "BatchNorm: num_features must be positive, got 0"));
}

TEST(LayerNormLayer, ParametersAndForward) {
  nn::LayerNorm ln(nn::LayerNormOptions({3, 4}).eps(1e-3));
  EXPECT_EQ(keys_of(ln->state_dict()), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_EQ(ln->weight.sizes(), (IntList{3, 4}));
  Tensor x = randn({2, 3, 4});
  EXPECT_TRUE(
      all_close(ln->forward(x), layer_norm(x, {3, 4}, ln->weight, ln->bias, 1e-3)));
  EXPECT_TRUE(all_close(
      F::layer_norm(x, F::LayerNormFuncOptions({3, 4}).weight(ln->weight).eps(1e-3)),
      ln->forward(x)));
  nn::LayerNorm plain(nn::LayerNormOptions({4}).elementwise_affine(false));
  EXPECT_TRUE(plain->parameters().empty());
}

TEST(CnnLayers, Printing) {
  nn::Sequential net(
      nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),
      nn::BatchNorm2d(32),
      nn::MaxPool2d(2),
      nn::Conv2d(
          nn::Conv2dOptions(32, 64, {3, 1}).stride(2).dilation(2).groups(2).bias(false)),
      nn::AvgPool2d(nn::AvgPool2dOptions(2).stride(1)),
      nn::BatchNorm1d(nn::BatchNormOptions(8).momentum(std::nullopt)),
      nn::LayerNorm(nn::LayerNormOptions({8})));
  EXPECT_EQ(printed(net),
            "Sequential(\n"
            "  (0): Conv2d(1, 32, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1])\n"
            "  (1): BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true, "
            "track_running_stats=true)\n"
            "  (2): MaxPool2d(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], "
            "dilation=[1, 1], ceil_mode=false)\n"
            "  (3): Conv2d(32, 64, kernel_size=[3, 1], stride=[2, 2], dilation=[2, 2], "
            "groups=2, bias=false)\n"
            "  (4): AvgPool2d(kernel_size=[2, 2], stride=[1, 1], padding=[0, 0])\n"
            "  (5): BatchNorm1d(8, eps=1e-05, momentum=None, affine=true, "
            "track_running_stats=true)\n"
            "  (6): LayerNorm([8], eps=1e-05, elementwise_affine=true)\n"
            ")");
}

TEST(CnnLayers, CloneCopiesBuffersWithoutSharing) {
  nn::BatchNorm2d bn(2);
  bn->forward(randn({3, 2, 2, 2}));
  auto copy = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(bn->clone());
  ASSERT_NE(copy, nullptr);
  EXPECT_TRUE(equal(copy->running_mean, bn->running_mean));
  EXPECT_EQ(copy->num_batches_tracked.item<int64_t>(), 1);
  copy->forward(randn({3, 2, 2, 2}));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
  EXPECT_FALSE(equal(copy->running_mean, bn->running_mean));
}

// The network: conv -> batch norm -> relu -> pool twice, then a
// linear classifier; one SGD step lowers the loss on its batch.
TEST(CnnLayers, SmallCnnTrainsAStep) {
  manual_seed(1);
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)),
                     nn::BatchNorm2d(8),
                     nn::ReLU(),
                     nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)),
                     nn::BatchNorm2d(16),
                     nn::ReLU(),
                     nn::MaxPool2d(2),
                     nn::Flatten(),
                     nn::Linear(16 * 7 * 7, 10));
  Tensor x = randn({16, 1, 28, 28});
  Tensor y = randint(10, {16});
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.01));
  Tensor loss = cross_entropy(net->forward(x), y);
  sgd.zero_grad();
  loss.backward();
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.grad().defined());
  sgd.step();
  EXPECT_LT(cross_entropy(net->forward(x), y).item<double>(), loss.item<double>());
}

}  // namespace
}  // namespace tandem
