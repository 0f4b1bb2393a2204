// DataParallel training equals single-device training on the whole batch
// (spec cases 32, 33, 37, 38): gradients after one backward (and, through
// create_graph, second derivatives) and parameters after
// five SGD steps, over 1-4 logical CPU devices, float64 and float32,
// including batches smaller than the device count and uneven splits.
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using tandem::Device;
using tandem::ScalarType;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::make_mlp;

std::shared_ptr<nn::SequentialImpl> copy_of(const nn::Sequential& net) {
  return std::dynamic_pointer_cast<nn::SequentialImpl>(net->clone());
}

double tolerance(ScalarType dtype) { return dtype == tandem::kFloat64 ? 1e-12 : 1e-5; }

// Relative error measured against the tensor's largest element: single
// elements can cancel to tiny values whose own relative error is large.
::testing::AssertionResult close_relative(const Tensor& got, const Tensor& want) {
  const double scale = want.abs().max().item<double>();
  const double tol = tolerance(want.dtype());
  return all_close(got, want, tol, tol * scale);
}

TEST(DataParallelBackward, GradientsEqualSingleDeviceGradients) {
  for (ScalarType dtype : {tandem::kFloat64, tandem::kFloat32}) {
    for (int n : {1, 2, 3, 4}) {
      // 16: even; 10: 4,4,2 over 3 and 3,3,3,1 over 4; 2: fewer rows than devices.
      for (int64_t batch : {16, 10, 2}) {
        auto net = make_mlp(6, 16, 3);
        net->to(dtype);
        auto reference = copy_of(net);
        const Tensor x = tandem::randn({batch, 6}, dtype);
        const Tensor target = tandem::randn({batch, 3}, dtype);
        tandem::mse_loss(reference->forward(x), target).backward();

        nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(n)));
        const Tensor y = dp(x);
        ASSERT_EQ(y.device(), Device("cpu:0"));
        tandem::mse_loss(y, target).backward();
        const auto want = reference->named_parameters();
        for (const auto& item : net->named_parameters()) {
          const Tensor& g = item->grad();
          ASSERT_TRUE(g.defined()) << item.key();
          EXPECT_EQ(g.device(), Device("cpu:0"));
          EXPECT_TRUE(close_relative(g, want[item.key()].grad()))
              << item.key() << ": " << n << " devices, batch " << batch << ", " << dtype;
        }
      }
    }
  }
}

TEST(DataParallelBackward, EitherDeviceOrderMatchesTheReference) {
  for (const char* first : {"cpu:0", "cpu:1"}) {
    nn::Linear fc(10, 5);
    fc->to(tandem::kFloat64);
    auto reference = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
    const std::vector<Device> devices = {
        Device(first), Device(first == std::string("cpu:0") ? "cpu:1" : "cpu:0")};
    fc->to(devices[0]);
    const Tensor x = tandem::randn({20, 10}, tandem::kFloat64).to("cpu:1");
    const Tensor want = reference->forward(x.to("cpu:0"));
    want.sum().backward();
    const Tensor y = nn::parallel::data_parallel(fc, x, devices);
    EXPECT_EQ(y.device(), devices[0]);
    EXPECT_TRUE(all_close(y.to("cpu:0"), want, 1e-12, 1e-14));
    y.sum().backward();
    EXPECT_EQ(fc->weight.grad().device(), devices[0]);
    EXPECT_TRUE(
        all_close(fc->weight.grad().to("cpu:0"), reference->weight.grad(), 1e-12));
    EXPECT_TRUE(all_close(fc->bias.grad().to("cpu:0"), reference->bias.grad(), 1e-12));
  }
}

TEST(DataParallelBackward, TwoForwardsThenOneBackward) {
  // Gradient accumulation: the first call's graph must survive the second
  // call's refresh of the cached replicas.
  auto net = make_mlp(5, 8, 2);
  net->to(tandem::kFloat64);
  auto reference = copy_of(net);
  const Tensor x1 = tandem::randn({6, 5}, tandem::kFloat64);
  const Tensor x2 = tandem::randn({7, 5}, tandem::kFloat64);
  (reference->forward(x1).sum() + reference->forward(x2).sum()).backward();
  nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(3)));
  (dp(x1).sum() + dp(x2).sum()).backward();
  const auto want = reference->named_parameters();
  for (const auto& item : net->named_parameters()) {
    EXPECT_TRUE(close_relative(item->grad(), want[item.key()].grad())) << item.key();
  }
}

TEST(DataParallelBackward, GradientIsTheReplicaOrderSumOfPerChunkGradients) {
  auto net = make_mlp(5, 8, 2);
  net->to(tandem::kFloat64);
  const Tensor x = tandem::randn({10, 5}, tandem::kFloat64);
  const Tensor grad_out = tandem::randn({10, 2}, tandem::kFloat64);
  // Each chunk's gradient alone (chunks of 4, 4, 2), on its own copy.
  std::vector<std::vector<Tensor>> per_chunk;
  int64_t start = 0;
  for (int64_t rows : {4, 4, 2}) {
    auto copy = copy_of(net);
    copy->forward(x.narrow(0, start, rows)).backward(grad_out.narrow(0, start, rows));
    std::vector<Tensor> grads;
    for (const Tensor& p : copy->parameters()) grads.push_back(p.grad());
    per_chunk.push_back(grads);
    start += rows;
  }
  nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(3)));
  dp(x).backward(grad_out);
  const auto params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor want = (per_chunk[0][i] + per_chunk[1][i]) + per_chunk[2][i];
    EXPECT_TRUE(all_close(params[i].grad(), want, 0, 0)) << "parameter " << i;
  }
}

TEST(DataParallelBackward, FiveSgdStepsMatchSingleDeviceTraining) {
  for (ScalarType dtype : {tandem::kFloat64, tandem::kFloat32}) {
    for (int n : {2, 3, 4}) {
      auto net = make_mlp(6, 16, 3);
      net->to(dtype);
      auto reference = copy_of(net);
      tandem::optim::SGD dp_sgd(net->parameters(), tandem::optim::SGDOptions(0.1));
      tandem::optim::SGD ref_sgd(reference->parameters(), tandem::optim::SGDOptions(0.1));
      nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(n)));
      for (int step = 0; step < 5; ++step) {
        const int64_t batch = step == 4 ? 3 : 13;  // uneven, then a short last batch
        const Tensor x = tandem::randn({batch, 6}, dtype);
        const Tensor target = tandem::randn({batch, 3}, dtype);
        dp_sgd.zero_grad();
        tandem::mse_loss(dp(x), target).backward();
        dp_sgd.step();
        ref_sgd.zero_grad();
        tandem::mse_loss(reference->forward(x), target).backward();
        ref_sgd.step();
      }
      const auto want = reference->named_parameters();
      for (const auto& item : net->named_parameters()) {
        EXPECT_TRUE(close_relative(item.value(), want[item.key()]))
            << item.key() << ": " << n << " devices, " << dtype;
      }
    }
  }
}

// A gradient penalty through DataParallel (spec case 33): the input
// gradient taken with create_graph, averaged, then backward. d/dW of
// mean(dy/dx) is 2/8 per weight; the bias gets a zero gradient, not none,
// as every replicated parameter does after a multi-replica backward.
TEST(DataParallelBackward, GradientPenaltyThroughDoubleBackward) {
  nn::Linear linear(4, 1);
  nn::DataParallel dp(linear, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  const Tensor x = tandem::ones({2, 4}).requires_grad_();
  const Tensor g =
      tandem::autograd::grad({dp(x).sum()}, {x}, {}, {}, /*create_graph=*/true)[0];
  ASSERT_TRUE(g.requires_grad());
  EXPECT_TRUE(all_close(g, linear->weight.detach().expand({2, 4})));
  g.mean().backward();
  EXPECT_TRUE(all_close(linear->weight.grad(), tandem::full({1, 4}, 0.25)));
  ASSERT_TRUE(linear->bias.grad().defined());
  EXPECT_TRUE(all_close(linear->bias.grad(), tandem::zeros({1})));
}

// The penalty's gradients with respect to the weights equal one device's,
// checked against finite differences through DataParallel over 3 devices.
TEST(DataParallelBackward, SecondDerivativesPassGradgradcheck) {
  auto net = make_mlp(3, 5, 2);
  net->to(tandem::kFloat64);
  nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(cpu_devices(3)));
  const Tensor x = tandem::randn({5, 3}, tandem::kFloat64).requires_grad_();
  tandem::autograd::tensor_list inputs{x};
  for (const Tensor& p : net->parameters()) inputs.push_back(p);
  const auto result = tandem::autograd::gradgradcheck(
      [&](const tandem::autograd::tensor_list& in) { return dp(in[0]); }, inputs);
  EXPECT_TRUE(result.ok) << result.message;
}

// x * t_rg + t_not_rg with t_rg a buffer that requires grad (spec case 34).
struct BufferGradImpl : nn::Cloneable<BufferGradImpl> {
  BufferGradImpl() { reset(); }
  void reset() override {
    t_rg = register_buffer("t_rg", tandem::randn({5}, tandem::kFloat64).requires_grad_());
    t_not_rg = register_buffer("t_not_rg", tandem::randn({5}, tandem::kFloat64));
  }
  Tensor forward(const Tensor& x) { return x * t_rg + t_not_rg; }
  Tensor t_rg, t_not_rg;
};
TANDEM_MODULE(BufferGrad);

TEST(DataParallelBackward, BuffersThatRequireGradPassGradcheck) {
  BufferGrad module;
  nn::DataParallel dp(module, nn::DataParallelOptions().device_ids(cpu_devices(2)));
  const Tensor x = tandem::randn({6, 5}, tandem::kFloat64).requires_grad_();
  const auto result = tandem::autograd::gradcheck(
      [&](const tandem::autograd::tensor_list& in) { return dp(in[0]); },
      {x, module->t_rg});
  EXPECT_TRUE(result.ok) << result.message;
}

}  // namespace
