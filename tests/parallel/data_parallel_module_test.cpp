// nn::DataParallel: placement, output device, the one-device and no-device
// rules, state dict keys, nesting, replica state and the tutorial's batch
// sizes (spec cases 8, 12, 13, 16, 25-29, 31).
#include <mutex>
#include <sstream>

#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
using nn::parallel::TensorTree;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::make_mlp;
using tandem::testing::Stateful;
using tandem::testing::throws_with;

nn::DataParallelOptions on(std::vector<Device> devices) {
  return nn::DataParallelOptions().device_ids(std::move(devices));
}

TEST(DataParallel, PlacementIsCheckedAgainstTheFirstDevice) {
  const Tensor x = tandem::randn({4, 3});
  const std::string message =
      "DataParallel: module must have its parameters and buffers on device cpu:0 "
      "(device_ids[0]) but found one of them on device: cpu:1";
  {  // module on cpu:1, device_ids (cpu:0, cpu:1)
    nn::Linear fc(3, 2);
    fc->to(Device("cpu:1"));
    nn::DataParallel dp(fc, on(cpu_devices(2)));
    EXPECT_TRUE(throws_with([&] { dp(x); }, message));
  }
  {  // module on cpu:0, device_ids (cpu:1, cpu:0); fine after moving it
    nn::Linear fc(3, 2);
    nn::DataParallel dp(fc, on({Device("cpu:1"), Device("cpu:0")}));
    EXPECT_TRUE(throws_with([&] { dp(x); },
                            "on device cpu:1 (device_ids[0]) but found one of them on "
                            "device: cpu:0"));
    fc->to(Device("cpu:1"));
    EXPECT_EQ(dp(x).device(), Device("cpu:1"));
  }
  {  // parts of the module on different devices
    nn::Sequential split(nn::Linear(3, 3), nn::Linear(3, 2));
    split->ptr(1)->to(Device("cpu:1"));
    nn::DataParallel dp(split, on(cpu_devices(2)));
    EXPECT_TRUE(throws_with([&] { dp(x); }, message));
  }
  {  // a buffer counts too
    Stateful module;
    module->calls.set_data(module->calls.to("cpu:1"));
    nn::DataParallel dp(module, on(cpu_devices(2)));
    EXPECT_TRUE(throws_with([&] { dp(tandem::randn({4, 4})); }, message));
  }
  {  // one device: the constructor moves the module there
    nn::Linear fc(3, 2);
    nn::DataParallel dp(fc, on({Device("cpu:2")}));
    EXPECT_EQ(fc->weight.device(), Device("cpu:2"));
    EXPECT_EQ(dp(x).device(), Device("cpu:2"));
  }
}

TEST(DataParallel, OutputDevice) {
  nn::Linear fc(3, 2);
  const Tensor x = tandem::randn({6, 3}).to("cpu:4");
  const Tensor want = fc(x.to("cpu:0"));
  nn::DataParallel dp(fc, on(cpu_devices(3)));
  EXPECT_EQ(dp->output_device(), Device("cpu:0"));
  EXPECT_EQ(dp(x).device(), Device("cpu:0"));
  EXPECT_TRUE(all_close(dp(x), want, 1e-6, 1e-6));
  nn::DataParallel to_other(fc, on(cpu_devices(3)).output_device(Device("cpu:7")));
  EXPECT_EQ(to_other(x).device(), Device("cpu:7"));
  nn::DataParallel to_cpu(fc, on(cpu_devices(3)).output_device(Device("cpu")));
  EXPECT_EQ(to_cpu(x).device(), Device("cpu:0"));
}

// Returns the sum of its input: a 0-d output.
struct SumImpl : nn::Cloneable<SumImpl> {
  void reset() override {}
  Tensor forward(const Tensor& x) { return x.sum(); }
};
TANDEM_MODULE(Sum);

TEST(DataParallel, OneDeviceReturnsTheModulesOutputAsItIs) {
  nn::DataParallel one(Sum(), on({Device("cpu:1")}).output_device(Device("cpu:0")));
  const Tensor y = one(tandem::ones({3, 2}));
  EXPECT_EQ(y.dim(), 0);                   // not gathered into a vector
  EXPECT_EQ(y.device(), Device("cpu:1"));  // output_device ignored
  // Several devices but a batch of one: one replica, gathered.
  nn::DataParallel two(Sum(), on(cpu_devices(2)).output_device(Device("cpu:3")));
  const Tensor z = two(tandem::ones({1, 2}));
  EXPECT_EQ(z.sizes(), tandem::IntList({1}));
  EXPECT_EQ(z.device(), Device("cpu:3"));
  EXPECT_EQ(z.item<double>(), 2.0);
}

TEST(DataParallel, WithoutDeviceIdsOrCudaTheModuleIsCalled) {
  if (tandem::device_count(tandem::kCUDA) > 0)
    GTEST_SKIP() << "the default device list is every GPU";
  nn::Linear fc(3, 2);
  nn::DataParallel dp(fc);
  EXPECT_TRUE(dp->device_ids().empty());
  EXPECT_FALSE(dp->output_device().has_value());
  const Tensor x = tandem::randn({5, 3});
  EXPECT_TRUE(all_close(dp(x), fc(x), 0, 0));
  EXPECT_EQ(dp->named_parameters().keys(),
            std::vector<std::string>({"module.weight", "module.bias"}));
  EXPECT_EQ(dp->module().get(), fc.ptr().get());
  EXPECT_TRUE(throws_with([&] { nn::DataParallel(fc, on({})); },
                          "DataParallel: device_ids is empty"));
}

// The first seed's model with block2 wrapped.
struct DataParallelModelImpl : nn::Module {
  explicit DataParallelModelImpl(nn::DataParallelOptions options = {}) {
    block1 = register_module("block1", nn::Linear(10, 20));
    block2 = register_module("block2", nn::DataParallel(nn::Linear(20, 20), options));
    block3 = register_module("block3", nn::Linear(20, 20));
  }
  Tensor forward(const Tensor& x) { return block3(block2(block1(x))); }
  nn::Linear block1{nullptr}, block3{nullptr};
  nn::DataParallel block2{nullptr};
};
TANDEM_MODULE(DataParallelModel);

TEST(DataParallel, NestsInsideOtherModules) {
  DataParallelModel cpu_mode;
  EXPECT_EQ(cpu_mode->state_dict().keys(),
            std::vector<std::string>({"block1.weight",
                                      "block1.bias",
                                      "block2.module.weight",
                                      "block2.module.bias",
                                      "block3.weight",
                                      "block3.bias"}));
  // Two devices: the same values and gradients as the unwrapped layers.
  DataParallelModel model(on(cpu_devices(2)));
  model->load_state_dict(cpu_mode->state_dict());
  const Tensor x = tandem::randn({9, 10});
  const Tensor y = model(x);
  const Tensor want = cpu_mode(x);
  EXPECT_TRUE(all_close(y, want, 1e-5, 1e-6));
  y.sum().backward();
  want.sum().backward();
  const auto got = model->named_parameters();
  for (const auto& item : cpu_mode->named_parameters()) {
    EXPECT_TRUE(all_close(got[item.key()].grad(), item->grad(), 1e-5, 1e-6))
        << item.key();
  }
  std::ostringstream printed;
  printed << *model->block2;
  EXPECT_EQ(printed.str(),
            "DataParallel(\n  (module): Linear(in_features=20, out_features=20, "
            "bias=true)\n)");
}

TEST(DataParallel, LoadingAnUnprefixedStateDictNamesTheMissingKeys) {
  nn::Linear fc(3, 2);
  nn::DataParallel dp(nn::Linear(3, 2));
  EXPECT_TRUE(throws_with([&] { dp->load_state_dict(fc->state_dict()); },
                          "Missing key(s) in state_dict: \"module.weight\", "
                          "\"module.bias\""));
}

TEST(DataParallel, ReplicaStateIsThrowawayExceptInPlaceUpdatesOfReplicaZero) {
  Stateful module;
  nn::DataParallel dp(module, on(cpu_devices(2)));
  for (int i = 0; i < 3; ++i) dp(tandem::randn({8, 4}));
  EXPECT_EQ(module->counter, 0);
  EXPECT_EQ(module->calls.item<double>(), 3.0);
}

// Counts calls and returns ones(2, 3) on the current device (spec case 8).
struct NoArgumentsImpl : nn::Cloneable<NoArgumentsImpl> {
  explicit NoArgumentsImpl(
      std::shared_ptr<std::atomic<int>> calls = std::make_shared<std::atomic<int>>(0))
      : calls(std::move(calls)) {}
  void reset() override {}
  TensorTree forward(const TensorTree& input) {
    EXPECT_TRUE(input.is_list() && input.size() == 0);
    ++*calls;
    return tandem::ones({2, 3}, tandem::TensorOptions().device(tandem::current_device()));
  }
  std::shared_ptr<std::atomic<int>> calls;
};
TANDEM_MODULE(NoArguments);

TEST(DataParallel, ModuleWithoutInputsRunsOnce) {
  for (int n : {1, 2}) {
    NoArguments module;
    nn::DataParallel dp(module, on(cpu_devices(n)));
    const TensorTree out = dp->forward(TensorTree{});
    EXPECT_EQ(*module->calls, 1);
    EXPECT_EQ(out.tensor().device(), Device("cpu:0"));
    EXPECT_TRUE(all_close(out.tensor(), tandem::ones({2, 3}), 0, 0));
  }
}

TEST(DataParallel, UnderNoGradNothingRequiresGrad) {
  nn::Linear fc(3, 2);
  nn::DataParallel dp(fc, on(cpu_devices(2)));
  tandem::NoGradGuard no_grad;
  const Tensor y = dp(tandem::randn({4, 3}));
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(fc->weight.requires_grad());
  EXPECT_TRUE(fc->weight.is_leaf());
}

// The second seed's Model: records the batch size each replica sees.
struct TutorialModelImpl : nn::Cloneable<TutorialModelImpl> {
  struct Sizes {
    std::mutex mutex;
    std::vector<int64_t> rows;
  };
  TutorialModelImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(5, 2)); }
  Tensor forward(const Tensor& x) {
    const Tensor y = fc(x);
    std::lock_guard<std::mutex> lock(sizes->mutex);
    sizes->rows.push_back(x.size(0));
    return y;
  }
  nn::Linear fc{nullptr};
  std::shared_ptr<Sizes> sizes = std::make_shared<Sizes>();
};
TANDEM_MODULE(TutorialModel);

TEST(DataParallel, EightDevicesReproduceTheTutorialBatchSizes) {
  TutorialModel model;
  nn::DataParallel dp(model, on(cpu_devices(8)));
  for (int64_t batch : {30, 10}) {
    model->sizes->rows.clear();
    const Tensor out = dp(tandem::randn({batch, 5}));
    EXPECT_EQ(out.sizes(), tandem::IntList({batch, 2}));
    std::vector<int64_t> rows = model->sizes->rows;
    std::sort(rows.rbegin(), rows.rend());
    const std::vector<int64_t> want = batch == 30
                                          ? std::vector<int64_t>{4, 4, 4, 4, 4, 4, 4, 2}
                                          : std::vector<int64_t>{2, 2, 2, 2, 2};
    EXPECT_EQ(rows, want) << "batch " << batch;
  }
}

}  // namespace

namespace {

// Calls zero_grad() on itself inside forward (spec case 13).
struct ZeroGradInForwardImpl : nn::Cloneable<ZeroGradInForwardImpl> {
  ZeroGradInForwardImpl() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(3, 2)); }
  Tensor forward(const Tensor& x) {
    zero_grad();
    return fc->forward(x);
  }
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(ZeroGradInForward);

TEST(DataParallel, ZeroGradInAReplicaWarnsThatItHasNoEffect) {
  std::mutex mutex;
  std::vector<std::string> warnings;
  const auto previous = tandem::set_warning_handler([&](const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex);
    warnings.push_back(message);
  });
  ZeroGradInForward module;
  module->forward(tandem::randn({4, 3}));  // the original itself: silent
  EXPECT_TRUE(warnings.empty());
  nn::DataParallel dp(module, on(cpu_devices(2)));
  dp(tandem::randn({4, 3})).sum().backward();
  tandem::set_warning_handler(previous);
  ASSERT_EQ(warnings.size(), 2u);  // once per replica
  for (const std::string& w : warnings) {
    EXPECT_EQ(w.rfind("Calling .zero_grad() from a module created with nn.DataParallel() "
                      "has no effect.",
                      0),
              0u)
        << w;
  }
  EXPECT_TRUE(module->fc->weight.grad().defined());  // the originals' grads are intact
}

}  // namespace
