// The data-parallel spec's section-9 cases that need accelerators
// (/work/shared/spec/data_parallel.md), on real devices: "dev 0, dev 1" are
// cuda:0 and cuda:1 when there are two GPUs, else cuda:0 and cpu:0 (see
// device_pair()). Cases 2, 9, 10, 11, 12, 17, 21, 22, 25, 26, 27, 32, 37, 38.
#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::close_to;
using testing::device_pair;
using testing::device_under_test;
using testing::identical;
using testing::throws_with;

nn::DataParallelOptions on(std::vector<Device> devices) {
  return nn::DataParallelOptions().device_ids(std::move(devices));
}

// Whether two tensors on these devices could share memory: only logical CPU
// devices share the host's.
bool may_share(Device a, Device b) { return a.is_cpu() && b.is_cpu(); }

class CudaParallelSpec : public testing::CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (!IsSkipped()) pair = device_pair();
  }
  std::vector<Device> pair;
};

TEST_F(CudaParallelSpec, Case2ScatterPiecesAndGradientsGoBack) {
  for (const Device source : {Device(kCPU), pair[0]}) {
    Tensor x = testing::uniform({4, 4}, gen).to(source).requires_grad_();
    const auto pieces = parallel::scatter(x, pair);
    ASSERT_EQ(pieces.size(), 2u);
    EXPECT_EQ(pieces[0].device(), pair[0]);
    EXPECT_EQ(pieces[1].device(), pair[1]);
    EXPECT_TRUE(identical(pieces[0].to(kCPU), x.narrow(0, 0, 2).to(kCPU)));
    EXPECT_TRUE(identical(pieces[1].to(kCPU), x.narrow(0, 2, 2).to(kCPU)));
    if (source == pair[0]) {
      EXPECT_EQ(pieces[0].data_ptr(), x.data_ptr());
    }
    pieces[0].backward(full({2, 4}, 2.0, pieces[0].options()));
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().device(), source);
    EXPECT_TRUE(identical(x.grad().to(kCPU),
                          cat({full({2, 4}, 2.0, kFloat64), zeros({2, 4}, kFloat64)})));
  }
}

TEST_F(CudaParallelSpec, Case9ReplicasLiveOnTheirDevices) {
  nn::Linear fc(10, 5);
  fc->to(pair[0]);
  auto replicas = parallel::replicate(fc, pair);
  ASSERT_EQ(replicas.size(), 2u);
  const Tensor x = testing::uniform({3, 10}, gen).to(kFloat32);
  const Tensor want = fc(x.to(pair[0])).to(kCPU);
  for (size_t j = 0; j < 2; ++j) {
    EXPECT_EQ(replicas[j]->weight.device(), pair[j]);
    EXPECT_EQ(replicas[j]->bias.device(), pair[j]);
    EXPECT_TRUE(close_to(replicas[j]->forward(x.to(pair[j])), want)) << pair[j];
  }
  EXPECT_EQ(replicas[0]->weight.data_ptr(), fc->weight.data_ptr());
  if (!may_share(pair[0], pair[1])) {
    EXPECT_NE(replicas[1]->weight.data_ptr(), fc->weight.data_ptr());
  }
}

// A buffer that forward increments in place, and a plain counter (cases 10, 12).
struct CountingImpl : nn::Cloneable<CountingImpl> {
  CountingImpl() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(4, 2));
    calls = register_buffer("calls", zeros({1}));
  }
  Tensor forward(const Tensor& x) {
    ++counter;
    {
      NoGradGuard no_grad;
      calls.add_(1);
    }
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
  Tensor calls;
  int counter = 0;
};
TANDEM_MODULE(Counting);

TEST_F(CudaParallelSpec, Cases10And12BuffersOfReplicaZeroAreTheOriginals) {
  Counting module;
  module->to(pair[0]);
  auto replicas = parallel::replicate(module, pair);
  EXPECT_EQ(replicas[1]->calls.device(), pair[1]);
  EXPECT_EQ(replicas[0]->calls.data_ptr(), module->calls.data_ptr());
  nn::DataParallel dp(module, on(pair));
  for (int i = 0; i < 3; ++i) dp(testing::uniform({8, 4}, gen).to(kFloat32));
  EXPECT_EQ(module->counter, 0);
  EXPECT_EQ(module->calls.item<double>(), 3.0);
}

TEST_F(CudaParallelSpec, Case11BatchNormStatisticsComeFromReplicaZero) {
  nn::BatchNorm1d bn(3);
  auto reference = std::dynamic_pointer_cast<nn::BatchNorm1dImpl>(bn->clone());
  bn->to(pair[0]);
  nn::DataParallel dp(bn, on(pair));
  const Tensor x = testing::uniform({8, 3}, gen, -2, 5).to(kFloat32);
  dp(x);
  reference->forward(x.narrow(0, 0, 4));  // rows 0-3 only
  EXPECT_EQ(bn->running_mean.device(), pair[0]);
  EXPECT_TRUE(close_to(bn->running_mean, reference->running_mean));
  EXPECT_TRUE(close_to(bn->running_var, reference->running_var));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 1);
}

TEST_F(CudaParallelSpec, Case17ParallelApplyRunsEachModuleOnItsDevice) {
  std::vector<nn::Linear> modules = {nn::Linear(10, 5), nn::Linear(10, 5)};
  modules[0]->to(pair[0]);
  modules[1]->to(pair[1]);
  const std::vector<Tensor> inputs = {
      testing::uniform({2, 10}, gen).to(pair[0], kFloat32),
      testing::uniform({2, 10}, gen).to(pair[1], kFloat32)};
  const auto outputs = parallel::parallel_apply(modules, inputs, pair);
  ASSERT_EQ(outputs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(outputs[i].device(), pair[i]);
    EXPECT_TRUE(identical(outputs[i].to(kCPU), modules[i](inputs[i]).to(kCPU)));
  }
}

TEST_F(CudaParallelSpec, Cases21And22GatherOntoADeviceOrTheCpu) {
  Tensor a = testing::uniform({2, 4}, gen).to(pair[0]).requires_grad_();
  Tensor b = testing::uniform({2, 4}, gen).to(pair[1]).requires_grad_();
  for (const Device destination : {pair[0], Device(kCPU)}) {
    a.mutable_grad() = Tensor();
    b.mutable_grad() = Tensor();
    const Tensor out = parallel::gather({a, b}, destination);
    EXPECT_EQ(out.device(), destination);
    EXPECT_EQ(out.sizes(), IntList({4, 4}));
    EXPECT_TRUE(identical(out.narrow(0, 0, 2).to(kCPU), a.to(kCPU)));
    EXPECT_TRUE(identical(out.narrow(0, 2, 2).to(kCPU), b.to(kCPU)));
    const Tensor g = testing::uniform({4, 4}, gen).to(destination);
    out.backward(g);
    EXPECT_EQ(a.grad().device(), pair[0]);
    EXPECT_EQ(b.grad().device(), pair[1]);
    EXPECT_TRUE(identical(a.grad().to(kCPU), g.narrow(0, 0, 2).to(kCPU)));
    EXPECT_TRUE(identical(b.grad().to(kCPU), g.narrow(0, 2, 2).to(kCPU)));
  }
  // Two 0-dim tensors gather into a vector.
  Tensor s = scalar_tensor(3.0, TensorOptions(kFloat64).device(pair[0])).requires_grad_();
  Tensor t = scalar_tensor(5.0, TensorOptions(kFloat64).device(pair[1])).requires_grad_();
  const Tensor v = parallel::gather({s, t}, pair[0]);
  EXPECT_EQ(v.sizes(), IntList({2}));
  v.backward(testing::from_values({7, 11}, {2}).to(pair[0]));
  EXPECT_EQ(s.grad().dim(), 0);
  EXPECT_EQ(t.grad().device(), pair[1]);
  EXPECT_EQ(t.grad().item<double>(), 11.0);
}

TEST_F(CudaParallelSpec, Case25PlacementIsCheckedAgainstTheFirstDevice) {
  const Tensor x = testing::uniform({4, 3}, gen).to(kFloat32);
  nn::Linear fc(3, 2);
  fc->to(pair[1]);
  nn::DataParallel dp(fc, on(pair));
  EXPECT_TRUE(
      throws_with([&] { dp(x); },
                  detail::str("DataParallel: module must have its parameters and "
                              "buffers on device ",
                              pair[0],
                              " (device_ids[0]) but found one of them on device: ",
                              pair[1])));
  fc->to(pair[0]);
  EXPECT_EQ(dp(x).device(), pair[0]);
  // Parts of a module on different devices.
  nn::Sequential split(nn::Linear(3, 3), nn::Linear(3, 2));
  split->ptr(0)->to(pair[0]);
  split->ptr(1)->to(pair[1]);
  nn::DataParallel dp_split(split, on(pair));
  EXPECT_TRUE(throws_with([&] { dp_split(x); }, "but found one of them on device"));
}

TEST_F(CudaParallelSpec, Cases26And27OutputDeviceAndTheOneDevicePath) {
  const Tensor x = testing::uniform({6, 3}, gen).to(kFloat32);
  for (const std::vector<Device>& order : {pair, std::vector<Device>{pair[1], pair[0]}}) {
    nn::Linear fc(3, 2);
    fc->to(order[0]);
    const Tensor want = fc(x.to(order[0]));
    nn::DataParallel dp(fc, on(order));
    EXPECT_EQ(dp(x).device(), order[0]);
    EXPECT_TRUE(close_to(dp(x), want));
    nn::DataParallel to_cpu(fc, on(order).output_device(Device(kCPU)));
    EXPECT_EQ(to_cpu(x).device(), Device(kCPU));
  }
  // One device id: the constructor moves a CPU module there, and forward
  // returns the module's output as it is (no gather, output_device ignored).
  struct SumImpl : nn::Cloneable<SumImpl> {
    SumImpl() { reset(); }
    void reset() override { w = register_parameter("w", ones({2})); }
    Tensor forward(const Tensor& in) { return (in * w).sum(); }
    Tensor w;
  };
  auto sum_module = std::make_shared<SumImpl>();
  nn::DataParallel one(sum_module, on({device_under_test()}).output_device(Device(kCPU)));
  EXPECT_EQ(sum_module->w.device(), device_under_test());
  const Tensor y = one(ones({3, 2}));
  EXPECT_EQ(y.dim(), 0);
  EXPECT_EQ(y.device(), device_under_test());
  EXPECT_EQ(y.item<double>(), 6.0);
  // Two ids but a batch of one: one replica, gathered into a vector.
  auto two_module = std::make_shared<SumImpl>();
  two_module->to(pair[0]);
  nn::DataParallel two(two_module, on(pair).output_device(Device(kCPU)));
  const Tensor z = two(ones({1, 2}));
  EXPECT_EQ(z.sizes(), IntList({1}));
  EXPECT_EQ(z.device(), Device(kCPU));
}

TEST_F(CudaParallelSpec, Case32EitherDeviceOrderMatchesTheReference) {
  for (const std::vector<Device>& order : {pair, std::vector<Device>{pair[1], pair[0]}}) {
    nn::Linear fc(10, 5);
    fc->to(kFloat64);
    auto reference = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
    fc->to(order[0]);
    const Tensor x = testing::uniform({20, 10}, gen).to(pair[1]);
    const Tensor want = reference->forward(x.to(kCPU));
    want.sum().backward();
    const Tensor y = nn::parallel::data_parallel(fc, x, order);
    EXPECT_EQ(y.device(), order[0]);
    EXPECT_TRUE(close_to(y, want));
    y.sum().backward();
    EXPECT_EQ(fc->weight.grad().device(), order[0]);
    EXPECT_TRUE(close_to(fc->weight.grad(), reference->weight.grad()));
    EXPECT_TRUE(close_to(fc->bias.grad(), reference->bias.grad()));
  }
}

// conv(2 -> 2, k2) + relu + linear(8 -> 2) + log_softmax (case 37).
struct SmallConvNetImpl : nn::Cloneable<SmallConvNetImpl> {
  SmallConvNetImpl() { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(2, 2, 2)));
    fc = register_module("fc", nn::Linear(8, 2));
  }
  Tensor forward(const Tensor& x) {
    return log_softmax(fc->forward(relu(conv->forward(x)).flatten(1)), 1);
  }
  nn::Conv2d conv{nullptr};
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(SmallConvNet);

TEST_F(CudaParallelSpec, Case37ThreeSgdStepsMatchSingleDeviceTraining) {
  SmallConvNet net;
  net->to(kFloat64);
  auto reference = std::dynamic_pointer_cast<SmallConvNetImpl>(net->clone());
  net->to(pair[0]);
  optim::SGD sgd(net->parameters(), optim::SGDOptions(0.1));
  optim::SGD ref_sgd(reference->parameters(), optim::SGDOptions(0.1));
  for (int step = 0; step < 3; ++step) {
    const Tensor x = testing::uniform({16, 2, 3, 3}, gen);
    sgd.zero_grad();
    const Tensor y = nn::parallel::data_parallel(net, x, pair);
    mse_loss(y, zeros_like(y)).backward();
    sgd.step();
    ref_sgd.zero_grad();
    const Tensor want = reference->forward(x);
    mse_loss(want, zeros_like(want)).backward();
    ref_sgd.step();
  }
  const auto want = reference->named_parameters();
  for (const auto& item : net->named_parameters()) {
    EXPECT_EQ(item->device(), pair[0]);
    EXPECT_TRUE(close_to(item.value(), want[item.key()], 100)) << item.key();
  }
}

TEST_F(CudaParallelSpec, Case38GradientIsTheReplicaOrderSumOfChunkGradients) {
  auto net = nn::Sequential(nn::Linear(5, 8), nn::ReLU(), nn::Linear(8, 2)).ptr();
  net->to(kFloat64);
  net->to(pair[0]);
  const Tensor x = testing::uniform({10, 5}, gen);
  const Tensor grad_out = testing::uniform({10, 2}, gen);
  // Each chunk's gradient on its replica's device, from its own copy.
  std::vector<std::vector<Tensor>> per_chunk;
  for (size_t j = 0; j < 2; ++j) {
    auto copy = std::dynamic_pointer_cast<nn::SequentialImpl>(net->clone());
    copy->to(pair[j]);
    copy->forward(x.narrow(0, 5 * j, 5).to(pair[j]))
        .backward(grad_out.narrow(0, 5 * j, 5).to(pair[j]));
    std::vector<Tensor> grads;
    for (const Tensor& p : copy->parameters()) grads.push_back(p.grad());
    per_chunk.push_back(grads);
  }
  nn::DataParallel dp(net, on(pair));
  dp(x).backward(grad_out.to(pair[0]));
  const auto params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(params[i].grad().device(), pair[0]);
    const Tensor want = per_chunk[0][i].to(kCPU) + per_chunk[1][i].to(kCPU);
    EXPECT_TRUE(identical(params[i].grad().to(kCPU), want)) << "parameter " << i;
  }
}

}  // namespace
}  // namespace tandem
