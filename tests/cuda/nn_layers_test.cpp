// Layers and losses on the device under test, beyond the gradient tables:
// modules moved with to(device), batch norm's running statistics in
// training (momentum and cumulative average) and their use in evaluation,
// max pooling's indices, and the losses' edge cases (every target ignored,
// zero class weights, wide and tall inputs, 1-D input).
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;

class CudaLayers : public testing::CudaTest {};

// A module and its copy on the device (same parameters and buffers).
template <typename Holder>
std::pair<Holder, Holder> with_device_copy(Holder reference) {
  using Impl = typename Holder::ContainedType;
  Holder copy(std::dynamic_pointer_cast<Impl>(reference->clone()));
  copy->to(device_under_test());
  return {reference, copy};
}

TEST_F(CudaLayers, BatchNormRunningStatisticsFollowTheCpu) {
  for (const std::optional<double>& momentum :
       {std::optional<double>(0.1), std::optional<double>()}) {
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      nn::BatchNorm2d reference(nn::BatchNormOptions(16).momentum(momentum));
      reference->to(kFloat64);
      auto [cpu, dev] = with_device_copy(reference);
      dev->to(dtype);
      const std::string what =
          detail::str(dtype, momentum ? " momentum" : " cumulative average");
      for (int step = 0; step < 3; ++step) {
        const Tensor x = testing::uniform({8, 16, 12, 10}, gen, -1, 3);
        const Tensor got = dev->forward(to_dut(x, dtype));
        EXPECT_TRUE(close_to(got, cpu->forward(x))) << what << " step " << step;
      }
      EXPECT_EQ(dev->running_mean.device(), device_under_test());
      EXPECT_TRUE(close_to(dev->running_mean, cpu->running_mean)) << what;
      EXPECT_TRUE(close_to(dev->running_var, cpu->running_var)) << what;
      EXPECT_TRUE(identical(dev->num_batches_tracked.to(kCPU), cpu->num_batches_tracked))
          << what;
      // Evaluation uses the running statistics.
      dev->eval();
      cpu->eval();
      const Tensor x = testing::uniform({4, 16, 5, 5}, gen);
      EXPECT_TRUE(close_to(dev->forward(to_dut(x, dtype)), cpu->forward(x)))
          << what << " eval";
    }
  }
  // The functional form updates running statistics passed in, on the device.
  const Tensor x = testing::uniform({300, 40}, gen, 2, 5);
  Tensor mean = zeros({40}, kFloat64), var = ones({40}, kFloat64);
  Tensor mean_d = to_dut(mean, kFloat32), var_d = to_dut(var, kFloat32);
  batch_norm(x, mean, var, {}, {}, /*training=*/true, /*momentum=*/0.3);
  batch_norm(to_dut(x, kFloat32), mean_d, var_d, {}, {}, true, 0.3);
  EXPECT_TRUE(close_to(mean_d, mean));
  EXPECT_TRUE(close_to(var_d, var));  // towards the unbiased variance
}

TEST_F(CudaLayers, ModulesOnTheDeviceMatchTheCpu) {
  manual_seed(5);
  const Tensor image = testing::uniform({6, 3, 20, 18}, gen);
  auto check = [&](const char* what, auto reference, const Tensor& input) {
    reference->to(kFloat64);
    auto [cpu, dev] = with_device_copy(reference);
    const Tensor got = dev->forward(to_dut(input));
    EXPECT_EQ(got.device(), device_under_test()) << what;
    EXPECT_TRUE(close_to(got, cpu->forward(input), 10)) << what;
    for (const Tensor& p : dev->parameters())
      EXPECT_EQ(p.device(), device_under_test()) << what;
  };
  check("Conv2d", nn::Conv2d(nn::Conv2dOptions(3, 8, 3).stride(2).padding(1)), image);
  check("Conv2d no bias grouped",
        nn::Conv2d(nn::Conv2dOptions(3, 6, {3, 5}).groups(3).bias(false).dilation(2)),
        image);
  check("MaxPool2d",
        nn::MaxPool2d(nn::MaxPool2dOptions(3).stride(2).ceil_mode(true)),
        image);
  check("AvgPool2d", nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(1).padding(1)), image);
  check("LayerNorm", nn::LayerNorm(nn::LayerNormOptions({20, 18})), image);
  check("Linear", nn::Linear(18, 7), image);
  check("Flatten", nn::Flatten(), image);
  check(
      "Dropout (eval)",
      [] {
        nn::Dropout d(0.5);
        d->eval();
        return d;
      }(),
      image);
  check("Sequential",
        nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 4, 3)),
                       nn::BatchNorm2d(4),
                       nn::ReLU(),
                       nn::MaxPool2d(2),
                       nn::Flatten(),
                       nn::Linear(4 * 9 * 8, 5),
                       nn::LogSoftmax(1)),
        image);
}

TEST_F(CudaLayers, MaxPoolIndicesEqualTheCpus) {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    // Whole numbers: ties inside windows resolve to the first maximum.
    const Tensor x = testing::integers({4, 8, 33, 31}, gen, 0, 5).to(dtype);
    const ExpandingArray<2> stride({2, 3});
    for (bool ceil_mode : {false, true}) {
      auto [values, indices] =
          max_pool2d_with_indices(to_dut(x), {3, 2}, stride, {1, 1}, {1, 2}, ceil_mode);
      auto [want_values, want_indices] =
          max_pool2d_with_indices(x, {3, 2}, stride, {1, 1}, {1, 2}, ceil_mode);
      EXPECT_TRUE(identical(values.to(kCPU), want_values))
          << dtype << " ceil " << ceil_mode;
      EXPECT_TRUE(identical(indices.to(kCPU), want_indices))
          << dtype << " ceil " << ceil_mode;
    }
    // Tied windows route the gradient to the same (first) element.
    const Tensor xd = to_dut(x).requires_grad_();
    const Tensor xc = x.clone().requires_grad_();
    max_pool2d(xd, 2).sum().backward();
    max_pool2d(xc, 2).sum().backward();
    EXPECT_TRUE(identical(xd.grad().to(kCPU), xc.grad())) << dtype;
  }
}

class CudaLosses : public testing::CudaTest {};

TEST_F(CudaLosses, EdgeCasesMatchTheCpu) {
  struct Case {
    std::string name;
    int64_t n, c;
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> fn;
  };
  const std::vector<Case> cases = {
      {"tall mean",
       65536,
       10,
       [](auto& x, auto& t, auto&) { return cross_entropy(x, t); }},
      {"wide sum",
       8,
       50000,
       [](auto& x, auto& t, auto&) { return cross_entropy(x, t, {}, kSum); }},
      {"every target ignored",
       64,
       5,
       [](auto& x, auto& t, auto&) { return cross_entropy(x, t * 0 + 3, {}, kMean, 3); }},
      {"every target ignored, smoothing",
       64,
       5,
       [](auto& x, auto& t, auto&) {
         return cross_entropy(x, t * 0 + 3, {}, kSum, 3, 0.2);
       }},
      {"zero class weights",
       300,
       6,
       [](auto& x, auto& t, auto& w) { return nll_loss(x, t, w * (w > 1.2), kMean); }},
      {"weighted none",
       300,
       6,
       [](auto& x, auto& t, auto& w) { return cross_entropy(x, t, w, kNone, 2, 0.1); }},
  };
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      const Tensor x = testing::uniform({c.n, c.c}, gen, -3, 3);
      const Tensor t = testing::integers({c.n}, gen, 0, c.c);
      const Tensor w = testing::uniform({c.c}, gen, 0.5, 2);
      const Tensor xd = to_dut(x, dtype).requires_grad_();
      const Tensor xc = x.clone().requires_grad_();
      const Tensor got = c.fn(xd, to_dut(t), to_dut(w, dtype));
      const Tensor want = c.fn(xc, t, w);
      const std::string what = detail::str(c.name, " ", dtype);
      EXPECT_EQ(got.device(), device_under_test()) << what;
      EXPECT_TRUE(close_to(got, want)) << what;
      got.sum().backward();
      want.sum().backward();
      EXPECT_TRUE(close_to(xd.grad(), xc.grad())) << what << " gradient";
    }
  }
  // 1-D input and a 0-dim target, as PyTorch.
  const Tensor logits = testing::uniform({10}, gen);
  const Tensor target = testing::from_values({7}, {}, kInt64);
  EXPECT_TRUE(close_to(cross_entropy(to_dut(logits, kFloat32), to_dut(target)),
                       cross_entropy(logits, target)));
  // The loss modules.
  nn::CrossEntropyLoss module(nn::CrossEntropyLossOptions().label_smoothing(0.1));
  const Tensor x = testing::uniform({32, 9}, gen);
  const Tensor t = testing::integers({32}, gen, 0, 9);
  EXPECT_TRUE(close_to(module(to_dut(x, kFloat32), to_dut(t)), module(x, t)));
  nn::MSELoss mse;
  EXPECT_TRUE(
      close_to(mse(to_dut(x, kFloat32), to_dut(x * 0.5, kFloat32)), mse(x, x * 0.5)));
}

}  // namespace
}  // namespace tandem
