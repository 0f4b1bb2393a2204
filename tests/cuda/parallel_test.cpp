// Data parallelism with GPUs: DataParallel over every GPU (cuda:0 ..
// cuda:N-1, one GPU included) and over mixed lists (cpu:0 with cuda:0, both
// orders) gives the single-device outputs, gradients and training; the
// first seed's model split between the CPU (embedding) and a GPU (linear)
// trains with each gradient on its parameter's device; broadcast_coalesced
// and reduce_add_coalesced move exact values between them. The spec's
// section-9 cases are in parallel_spec_test.cpp.
#include <mutex>
#include <thread>

#include "cuda/cuda_testing.h"

namespace tandem {
namespace {

using testing::all_devices_under_test;
using testing::close_to;
using testing::device_under_test;
using testing::identical;
using testing::to_dut;

std::shared_ptr<nn::SequentialImpl> mlp(int64_t in, int64_t hidden, int64_t out) {
  return nn::Sequential(nn::Linear(in, hidden),
                        nn::ReLU(),
                        nn::Linear(hidden, hidden),
                        nn::ReLU(),
                        nn::Linear(hidden, out))
      .ptr();
}

std::shared_ptr<nn::SequentialImpl> copy_of(
    const std::shared_ptr<nn::SequentialImpl>& net) {
  return std::dynamic_pointer_cast<nn::SequentialImpl>(net->clone());
}

std::string list(const std::vector<Device>& devices) {
  std::string out;
  for (const Device& d : devices) {
    if (!out.empty()) out += ",";
    out += d.str();
  }
  return out;
}

// The device lists to run over: every GPU, and cpu:0 with the device under
// test in both orders.
std::vector<std::vector<Device>> device_lists() {
  return {all_devices_under_test(),
          {Device(kCPU), device_under_test()},
          {device_under_test(), Device(kCPU)}};
}

class CudaDataParallel : public testing::CudaTest {};

TEST_F(CudaDataParallel, OutputsAndGradientsEqualTheSingleDeviceRun) {
  for (const auto& devices : device_lists()) {
    for (ScalarType dtype : {kFloat64, kFloat32}) {
      // 16: even; 9: uneven; 1: fewer rows than devices.
      for (int64_t batch : {16, 9, 1}) {
        const std::string what = detail::str(list(devices), " ", dtype, " batch ", batch);
        auto reference = mlp(6, 32, 3);
        reference->to(kFloat64);
        auto net = copy_of(reference);
        net->to(dtype);
        net->to(devices[0]);
        const Tensor x = testing::uniform({batch, 6}, gen);
        const Tensor target = testing::uniform({batch, 3}, gen);
        const Tensor want = reference->forward(x);
        mse_loss(want, target).backward();

        nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(devices));
        const Tensor y = dp(x.to(dtype));
        EXPECT_EQ(y.device(), devices[0]) << what;
        EXPECT_TRUE(close_to(y, want)) << what;
        mse_loss(y, target.to(devices[0], dtype)).backward();
        const auto want_params = reference->named_parameters();
        for (const auto& item : net->named_parameters()) {
          ASSERT_TRUE(item->grad().defined()) << what << " " << item.key();
          EXPECT_EQ(item->grad().device(), devices[0]) << what << " " << item.key();
          EXPECT_TRUE(close_to(item->grad(), want_params[item.key()].grad()))
              << what << " " << item.key();
        }
      }
    }
  }
}

TEST_F(CudaDataParallel, FiveSgdStepsEqualSingleDeviceTraining) {
  for (const auto& devices : device_lists()) {
    for (ScalarType dtype : {kFloat64, kFloat32}) {
      const std::string what = detail::str(list(devices), " ", dtype);
      auto reference = mlp(10, 64, 4);
      reference->to(kFloat64);
      auto net = copy_of(reference);
      net->to(dtype);
      net->to(devices[0]);
      optim::SGD ref_sgd(reference->parameters(), optim::SGDOptions(0.1).momentum(0.9));
      optim::SGD dp_sgd(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
      nn::DataParallel dp(net, nn::DataParallelOptions().device_ids(devices));
      for (int step = 0; step < 5; ++step) {
        const int64_t batch = step == 4 ? 3 : 37;
        const Tensor x = testing::uniform({batch, 10}, gen);
        const Tensor labels = testing::integers({batch}, gen, 0, 4);
        ref_sgd.zero_grad();
        cross_entropy(reference->forward(x), labels).backward();
        ref_sgd.step();
        dp_sgd.zero_grad();
        cross_entropy(dp(x.to(dtype)), labels.to(devices[0])).backward();
        dp_sgd.step();
      }
      const auto want = reference->named_parameters();
      for (const auto& item : net->named_parameters()) {
        EXPECT_EQ(item->device(), devices[0]) << what;
        EXPECT_TRUE(close_to(item.value(), want[item.key()], 10))
            << what << " " << item.key();
      }
    }
  }
}

TEST_F(CudaDataParallel, ConvNetOverEveryGpu) {
  const std::vector<Device> devices = all_devices_under_test();
  auto reference = nn::Sequential(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)),
                                  nn::ReLU(),
                                  nn::MaxPool2d(2),
                                  nn::Flatten(),
                                  nn::Linear(8 * 8 * 8, 10))
                       .ptr();
  reference->to(kFloat64);
  auto net = copy_of(reference);
  net->to(kFloat32);
  net->to(devices[0]);
  const Tensor x = testing::uniform({24, 3, 16, 16}, gen);
  const Tensor labels = testing::integers({24}, gen, 0, 10);
  cross_entropy(reference->forward(x), labels).backward();
  const Tensor y = nn::parallel::data_parallel(net, x.to(kFloat32), devices);
  cross_entropy(y, labels.to(devices[0])).backward();
  const auto want = reference->named_parameters();
  for (const auto& item : net->named_parameters()) {
    EXPECT_EQ(item->grad().device(), devices[0]);
    EXPECT_TRUE(close_to(item->grad(), want[item.key()].grad(), 10)) << item.key();
  }
}

TEST_F(CudaDataParallel, DefaultDeviceListIsEveryGpu) {
  nn::Linear fc(4, 2);
  nn::DataParallel dp(fc);
  if (device_under_test().is_cpu()) {
    // No GPU in this build or on this machine: the module is simply called.
    EXPECT_TRUE(dp->device_ids().empty());
    return;
  }
  EXPECT_EQ(dp->device_ids(), all_devices_under_test());
  fc->to(device_under_test());
  const Tensor x = testing::uniform({8, 4}, gen).to(kFloat32);
  const Tensor y = dp(x);
  EXPECT_EQ(y.device(), device_under_test());
  EXPECT_TRUE(close_to(y, fc(to_dut(x))));
}

// Records the current device and the input's device in each replica.
struct ProbeImpl : nn::Cloneable<ProbeImpl> {
  struct Log {
    std::mutex mutex;
    std::vector<std::pair<Device, Device>> seen;  // current, input
  };
  ProbeImpl() { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x) {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->seen.emplace_back(current_device(), x.device());
    return x * 2;
  }
  std::shared_ptr<Log> log = std::make_shared<Log>();
};
TANDEM_MODULE(Probe);

TEST_F(CudaDataParallel, ReplicasRunWithTheirDeviceCurrent) {
  for (const auto& devices : device_lists()) {
    Probe probe;
    const Tensor x = testing::uniform({2 * static_cast<int64_t>(devices.size()), 3}, gen);
    const Tensor y = nn::parallel::data_parallel(probe, x, devices);
    EXPECT_TRUE(identical(y.to(kCPU), x * 2)) << list(devices);
    ASSERT_EQ(probe->log->seen.size(), devices.size()) << list(devices);
    for (const auto& [current, input] : probe->log->seen) {
      EXPECT_EQ(current, input) << list(devices);
    }
  }
}

TEST_F(CudaDataParallel, HostThreadsSharingOneDevice) {
  // Several threads queue work on the same device at once (one stream, one
  // library handle per device): every result is still right.
  constexpr int kThreads = 4;
  std::vector<Tensor> inputs, results(kThreads);
  for (int i = 0; i < kThreads; ++i) inputs.push_back(testing::uniform({200, 300}, gen));
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Tensor acc = zeros({300, 300}, TensorOptions(kFloat64).device(device_under_test()));
      const Tensor a = to_dut(inputs[i]);
      for (int round = 0; round < 20; ++round) acc = acc + mm(a.t(), relu(a)).softmax(1);
      results[i] = acc.to(kCPU);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    const Tensor want = mm(inputs[i].t(), relu(inputs[i])).softmax(1) * 20;
    EXPECT_TRUE(close_to(results[i], want, 10)) << "thread " << i;
  }
}

// ---- the first seed's model: part on the CPU, part on a GPU ----

struct SplitModelImpl : nn::Module {
  explicit SplitModelImpl(Device second) : second(second) {
    embedding = register_module("embedding", nn::Embedding(1000, 10));
    linear = register_module("linear", nn::Linear(10, 10));
    linear->to(second);
  }
  Tensor forward(const Tensor& tokens) {
    return linear->forward(embedding->forward(tokens).to(second));
  }
  Device second;
  nn::Embedding embedding{nullptr};
  nn::Linear linear{nullptr};
};
TANDEM_MODULE(SplitModel);

TEST_F(CudaDataParallel, ModelSplitBetweenCpuAndGpuTrains) {
  SplitModel model(device_under_test());
  EXPECT_EQ(model->embedding->weight.device(), Device(kCPU));
  EXPECT_EQ(model->linear->weight.device(), device_under_test());
  // The same model on the CPU alone.
  nn::Embedding embedding(1000, 10);
  nn::Linear linear(10, 10);
  {
    NoGradGuard no_grad;
    embedding->weight.copy_(model->embedding->weight);
    linear->weight.copy_(model->linear->weight.to(kCPU));
    linear->bias.copy_(model->linear->bias.to(kCPU));
  }
  optim::SGD sgd(model->parameters(), optim::SGDOptions(0.5));
  optim::SGD ref_sgd(std::vector<Tensor>{embedding->weight, linear->weight, linear->bias},
                     optim::SGDOptions(0.5));
  for (int step = 0; step < 3; ++step) {
    const Tensor tokens = testing::integers({8, 4}, gen, 0, 1000);
    const Tensor target = testing::uniform({8, 4, 10}, gen).to(kFloat32);
    sgd.zero_grad();
    const Tensor out = model->forward(tokens);
    EXPECT_EQ(out.device(), device_under_test());
    const Tensor loss = mse_loss(out, target.to(device_under_test()));
    loss.backward();
    for (const auto& item : model->named_parameters()) {
      ASSERT_TRUE(item->grad().defined()) << item.key();
      EXPECT_EQ(item->grad().device(), item->device()) << item.key();
    }
    ref_sgd.zero_grad();
    const Tensor want = linear(embedding(tokens));
    mse_loss(want, target).backward();
    EXPECT_TRUE(close_to(out, want)) << "step " << step;
    EXPECT_TRUE(close_to(model->embedding->weight.grad(), embedding->weight.grad()));
    EXPECT_TRUE(close_to(model->linear->weight.grad(), linear->weight.grad()));
    sgd.step();
    ref_sgd.step();
  }
  EXPECT_TRUE(close_to(model->embedding->weight, embedding->weight));
  EXPECT_TRUE(close_to(model->linear->bias, linear->bias));
}

// ---- comm ----

TEST_F(CudaDataParallel, BroadcastAndReduceCoalescedAreExact) {
  const std::vector<Tensor> tensors = {testing::uniform({3, 4}, gen).to(kFloat32),
                                       testing::uniform({5}, gen),
                                       arange(6.0, kInt64),
                                       testing::uniform({4000, 300}, gen).to(kFloat32),
                                       testing::uniform({40, 30}, gen).to(kFloat32).t()};
  std::vector<std::vector<Device>> lists = device_lists();
  // The same GPU twice (NCCL cannot do that; the copies must still happen).
  lists.push_back({device_under_test(), device_under_test()});
  for (const auto& devices : lists) {
    std::vector<Tensor> sources;
    for (const Tensor& t : tensors) sources.push_back(t.to(devices[0]));
    for (size_t buffer : {parallel::kDefaultBufferSize, size_t{64}}) {
      const auto copies = parallel::broadcast_coalesced(sources, devices, buffer);
      ASSERT_EQ(copies.size(), devices.size());
      for (size_t j = 0; j < devices.size(); ++j) {
        for (size_t i = 0; i < tensors.size(); ++i) {
          EXPECT_EQ(copies[j][i].device(), devices[j]) << list(devices);
          EXPECT_TRUE(identical(copies[j][i].to(kCPU), tensors[i]))
              << list(devices) << " tensor " << i << " on " << devices[j];
        }
      }
      // Whole numbers: the sums are exact whatever the order.
      std::vector<std::vector<Tensor>> inputs;
      for (size_t j = 0; j < devices.size(); ++j) {
        std::vector<Tensor> mine;
        for (const Tensor& c : copies[j])
          mine.push_back((c * 0 + static_cast<double>(j + 1)));
        inputs.push_back(mine);
      }
      const double total = static_cast<double>(devices.size() * (devices.size() + 1) / 2);
      for (const Device& destination : {devices[0], devices.back(), Device(kCPU)}) {
        const auto sums = parallel::reduce_add_coalesced(inputs, destination, buffer);
        for (size_t i = 0; i < tensors.size(); ++i) {
          EXPECT_EQ(sums[i].device(), destination);
          EXPECT_TRUE(identical(sums[i].to(kCPU), full_like(tensors[i], total)))
              << list(devices) << " to " << destination << " tensor " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tandem
