// parallel_apply: devices, threads, grad mode and errors from replicas
// (spec cases 17, 18, 20).
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
namespace parallel = tandem::parallel;
using parallel::TensorTree;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::throws_with;

TEST(ParallelApply, EachModuleRunsOnItsDevice) {
  std::vector<nn::Linear> modules = {nn::Linear(10, 5), nn::Linear(10, 5)};
  modules[1]->to(Device("cpu:1"));
  const std::vector<Tensor> inputs = {tandem::randn({2, 10}),
                                      tandem::randn({2, 10}).to("cpu:1")};
  // Devices given, or taken from the inputs.
  for (const auto& devices : {std::optional<std::vector<Device>>(cpu_devices(2)),
                              std::optional<std::vector<Device>>()}) {
    const std::vector<Tensor> outputs =
        parallel::parallel_apply(modules, inputs, devices);
    ASSERT_EQ(outputs.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(outputs[i].device(), inputs[i].device());
      EXPECT_TRUE(all_close(outputs[i], modules[i](inputs[i]), 0, 0));
    }
  }
  // Trees in, trees out.
  const std::vector<TensorTree> trees(inputs.begin(), inputs.end());
  const std::vector<TensorTree> outputs = parallel::parallel_apply(modules, trees);
  EXPECT_TRUE(all_close(outputs[1].tensor(), modules[1](inputs[1]), 0, 0));
}

// Records where and how its forward ran.
struct ProbeImpl : nn::Cloneable<ProbeImpl> {
  struct Log {
    std::mutex mutex;
    std::set<std::thread::id> threads;
    std::vector<std::pair<Device, Device>> devices;  // current, input
  };
  explicit ProbeImpl(std::shared_ptr<Log> log = std::make_shared<Log>())
      : log(std::move(log)) {
    reset();
  }
  void reset() override {}
  Tensor forward(const Tensor& x) {
    std::lock_guard<std::mutex> lock(log->mutex);
    log->threads.insert(std::this_thread::get_id());
    log->devices.emplace_back(tandem::current_device(), x.device());
    return x;
  }
  std::shared_ptr<Log> log;
};
TANDEM_MODULE(Probe);

TEST(ParallelApply, RunsOnPersistentDeviceThreadsWithTheDeviceCurrent) {
  Probe probe;
  std::vector<Probe> modules = {probe, probe, probe};
  const auto devices = cpu_devices(3);
  std::vector<Tensor> inputs;
  for (const Device& d : devices) inputs.push_back(tandem::ones({1}).to(d));
  parallel::parallel_apply(modules, inputs, devices);
  const std::set<std::thread::id> first = probe->log->threads;
  EXPECT_EQ(first.size(), 3u);
  // The caller works for its current device, cpu:0; cpu:1 and cpu:2 run on
  // their executor threads.
  EXPECT_EQ(first.count(std::this_thread::get_id()), 1u);
  for (const auto& [current, input] : probe->log->devices) EXPECT_EQ(current, input);
  parallel::parallel_apply(modules, inputs, devices);
  EXPECT_EQ(probe->log->threads, first);  // no thread per call
}

struct ThrowingImpl : nn::Cloneable<ThrowingImpl> {
  explicit ThrowingImpl(bool fail = true) : fail(fail) { reset(); }
  void reset() override {}
  Tensor forward(const Tensor& x) {
    if (fail) throw std::out_of_range("wonderful");
    return x;
  }
  bool fail;
};
TANDEM_MODULE(Throwing);

TEST(ParallelApply, ErrorsNameTheReplicaAndKeepTheOriginal) {
  std::vector<Throwing> both = {Throwing(true), Throwing(true)};
  const std::vector<Tensor> inputs = {tandem::ones({1}), tandem::ones({1})};
  const std::vector<Device> same = {Device("cpu:0"), Device("cpu:0")};
  try {
    parallel::parallel_apply(both, inputs, same);
    FAIL() << "no exception";
  } catch (const tandem::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "Caught std::out_of_range in replica 0 on device cpu:0: wonderful");
    try {
      std::rethrow_if_nested(e);
      FAIL() << "the original exception is not nested";
    } catch (const std::out_of_range& original) {
      EXPECT_EQ(std::string(original.what()), "wonderful");
    }
  }
  std::vector<Throwing> second = {Throwing(false), Throwing(true)};
  const std::vector<Tensor> spread = {tandem::ones({1}), tandem::ones({1}).to("cpu:1")};
  EXPECT_TRUE(throws_with([&] { parallel::parallel_apply(second, spread); },
                          "Caught std::out_of_range in replica 1 on device cpu:1: "
                          "wonderful"));
}

struct NoGradOnlyImpl : nn::Cloneable<NoGradOnlyImpl> {
  void reset() override {}
  Tensor forward(const Tensor& x) {
    TANDEM_CHECK(!tandem::GradMode::is_enabled(), "grad mode must be disabled");
    return x;
  }
};
TANDEM_MODULE(NoGradOnly);

TEST(ParallelApply, GradModePropagates) {
  std::vector<NoGradOnly> modules = {NoGradOnly(), NoGradOnly()};
  const std::vector<Tensor> inputs = {tandem::ones({1}), tandem::ones({1}).to("cpu:1")};
  {
    tandem::NoGradGuard no_grad;
    EXPECT_NO_THROW(parallel::parallel_apply(modules, inputs));
  }
  EXPECT_TRUE(throws_with([&] { parallel::parallel_apply(modules, inputs); },
                          "Caught tandem::Error in replica 0 on device cpu:0: grad mode "
                          "must be disabled"));
}

TEST(ParallelApply, ArgumentChecks) {
  std::vector<nn::Linear> modules = {nn::Linear(2, 2), nn::Linear(2, 2)};
  const std::vector<Tensor> one = {tandem::ones({1, 2})};
  EXPECT_TRUE(throws_with([&] { parallel::parallel_apply(modules, one); },
                          "Must have as many inputs as modules"));
  const std::vector<Tensor> two = {tandem::ones({1, 2}), tandem::ones({1, 2})};
  EXPECT_TRUE(throws_with([&] { parallel::parallel_apply(modules, two, cpu_devices(3)); },
                          "Must have as many devices as modules"));
  const std::vector<TensorTree> no_tensors = {TensorTree{tandem::ones({1, 2})},
                                              TensorTree{}};
  EXPECT_TRUE(throws_with([&] { parallel::parallel_apply(modules, no_tensors); },
                          "in replica 1, no device was provided and no tensor input was "
                          "found; device cannot be resolved"));
  std::vector<nn::Linear> none;
  EXPECT_TRUE(parallel::parallel_apply(none, std::vector<Tensor>{}).empty());
}

}  // namespace
