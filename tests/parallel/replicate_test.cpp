// replicate: placement, storage sharing, gradients back to the original,
// and the replica cache (spec cases 9, 10).
#include "parallel/parallel_testing.h"

namespace {

namespace nn = tandem::nn;
namespace parallel = tandem::parallel;
using tandem::Device;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::cpu_devices;
using tandem::testing::Stateful;
using tandem::testing::throws_with;

TEST(Replicate, ReplicasLiveOnTheirDevicesAndComputeTheSame) {
  nn::Linear fc(10, 5);
  auto replicas = parallel::replicate(fc, cpu_devices(2));
  ASSERT_EQ(replicas.size(), 2u);
  const Tensor x = tandem::randn({3, 10});
  for (int j = 0; j < 2; ++j) {
    const Device device(tandem::kCPU, j);
    EXPECT_EQ(replicas[j]->weight.device(), device);
    EXPECT_EQ(replicas[j]->bias.device(), device);
    // Unlike PyTorch's, a replica has its parameters registered (LibTorch).
    EXPECT_EQ(replicas[j]->parameters().size(), 2u);
    EXPECT_FALSE(replicas[j]->weight.is_leaf());
    EXPECT_TRUE(replicas[j]->weight.requires_grad());
    EXPECT_TRUE(all_close(replicas[j]->forward(x.to(device)).to("cpu:0"), fc(x), 0, 0));
  }
  // Replica 0 shares the original's storage, and so do the parameters of
  // replicas on other logical CPU devices: the host's memory, no copy.
  EXPECT_EQ(replicas[0]->weight.data_ptr(), fc->weight.data_ptr());
  EXPECT_EQ(replicas[1]->weight.data_ptr(), fc->weight.data_ptr());
  // One backward node for the whole call.
  ASSERT_NE(replicas[0]->weight.grad_fn(), nullptr);
  EXPECT_EQ(replicas[0]->weight.grad_fn()->name(), "BroadcastBackward");
  EXPECT_EQ(replicas[0]->weight.grad_fn(), replicas[1]->bias.grad_fn());
  EXPECT_TRUE(parallel::replicate(fc, {}).empty());
}

TEST(Replicate, BuffersOfReplicaZeroAreTheOriginals) {
  Stateful module;
  module->calls.fill_(5);
  auto replicas = parallel::replicate(module, cpu_devices(2));
  EXPECT_EQ(replicas[1]->calls.device(), Device("cpu:1"));
  EXPECT_EQ(replicas[0]->calls.data_ptr(), module->calls.data_ptr());
  EXPECT_NE(replicas[1]->calls.data_ptr(), module->calls.data_ptr());
  EXPECT_EQ(replicas[1]->calls.item<double>(), 5.0);
  // In-place updates persist from replica 0 only.
  for (auto& r : replicas) r->forward(tandem::ones({1, 4}).to(r->calls.device()));
  EXPECT_EQ(module->calls.item<double>(), 6.0);
  EXPECT_FALSE(module->calls.requires_grad());
}

TEST(Replicate, GradientsOfAllReplicasSumIntoTheOriginal) {
  nn::Linear fc(4, 3);
  const Tensor x0 = tandem::randn({2, 4}), x1 = tandem::randn({5, 4});
  auto reference = std::dynamic_pointer_cast<nn::LinearImpl>(fc->clone());
  (reference->forward(x0).sum() + reference->forward(x1).sum()).backward();

  auto replicas = parallel::replicate(fc, cpu_devices(2));
  const Tensor y0 = replicas[0]->forward(x0);
  const Tensor y1 = replicas[1]->forward(x1.to("cpu:1"));
  (y0.sum() + y1.sum().to("cpu:0")).backward();
  EXPECT_EQ(fc->weight.grad().device(), Device("cpu:0"));
  EXPECT_TRUE(all_close(fc->weight.grad(), reference->weight.grad(), 1e-6, 1e-6));
  EXPECT_TRUE(all_close(fc->bias.grad(), reference->bias.grad(), 1e-6, 1e-6));
  EXPECT_FALSE(replicas[1]->weight.grad().defined());
}

struct PartlyUsedImpl : nn::Cloneable<PartlyUsedImpl> {
  PartlyUsedImpl() { reset(); }
  void reset() override {
    used = register_parameter("used", tandem::ones({3}));
    unused = register_parameter("unused", tandem::ones({2}));
    frozen = register_parameter("frozen", tandem::ones({3}), /*requires_grad=*/false);
  }
  Tensor forward(const Tensor& x) { return x * used * frozen; }
  Tensor used, unused, frozen;
};
TANDEM_MODULE(PartlyUsed);

TEST(Replicate, UnusedParametersGetZeroGradients) {
  PartlyUsed module;
  auto replicas = parallel::replicate(module, cpu_devices(2));
  EXPECT_FALSE(replicas[1]->frozen.requires_grad());
  const Tensor y0 = replicas[0]->forward(tandem::ones({3}));
  const Tensor y1 = replicas[1]->forward(tandem::ones({3}).to("cpu:1"));
  (y0.sum() + y1.sum().to("cpu:0")).backward();
  EXPECT_TRUE(all_close(module->used.grad(), tandem::full({3}, 2.0)));
  ASSERT_TRUE(module->unused.grad().defined());
  EXPECT_TRUE(all_close(module->unused.grad(), tandem::zeros({2})));
  EXPECT_FALSE(module->frozen.grad().defined());
}

TEST(Replicate, WithoutGradModeReplicasHaveNoHistory) {
  nn::Linear fc(4, 3);
  std::vector<std::shared_ptr<nn::LinearImpl>> replicas;
  {
    tandem::NoGradGuard no_grad;
    replicas = parallel::replicate(fc.ptr(), cpu_devices(2));
  }
  for (const auto& r : replicas) {
    EXPECT_FALSE(r->weight.requires_grad());
    EXPECT_EQ(r->weight.grad_fn(), nullptr);
  }
  EXPECT_TRUE(fc->weight.requires_grad());
  EXPECT_TRUE(fc->weight.is_leaf());
}

TEST(Replicate, ReplicasAreCachedAndRefreshed) {
  nn::Sequential net(nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2));
  const auto devices = cpu_devices(3);
  parallel::ReplicaCache cache;
  const auto first = parallel::replicate(net, devices, &cache);
  // Later calls reuse the modules, with the original's current values and
  // training flags.
  {
    tandem::NoGradGuard no_grad;
    net->ptr<nn::LinearImpl>(0)->weight.fill_(0.5);
  }
  net->eval();
  const auto second = parallel::replicate(net, devices, &cache);
  for (size_t j = 0; j < devices.size(); ++j) {
    EXPECT_EQ(second[j].get(), first[j].get());
    EXPECT_FALSE(second[j]->is_training());
    EXPECT_FALSE(second[j]->ptr(2)->is_training());
    EXPECT_TRUE(all_close(second[j]->ptr<nn::LinearImpl>(0)->weight.to("cpu:0"),
                          tandem::full({3, 4}, 0.5)));
  }
  // A prefix of the device list uses the first replicas.
  const auto prefix = parallel::replicate(net, cpu_devices(2), &cache);
  EXPECT_EQ(prefix[1].get(), first[1].get());
  // A changed parameter set rebuilds them.
  net->push_back(nn::Linear(2, 2));
  const auto rebuilt = parallel::replicate(net, devices, &cache);
  EXPECT_NE(rebuilt[0].get(), first[0].get());
  EXPECT_EQ(rebuilt[2]->size(), 4u);
  // So does clear().
  cache.clear();
  EXPECT_NE(parallel::replicate(net, devices, &cache)[1].get(), rebuilt[1].get());
  // Without a cache, every call clones the module afresh.
  EXPECT_NE(parallel::replicate(net, devices)[1].get(),
            parallel::replicate(net, devices)[1].get());
}

TEST(Replicate, SharedParametersStillCatchAnInPlaceChangeBeforeBackward) {
  nn::Linear fc(4, 3);
  auto replicas = parallel::replicate(fc, cpu_devices(2));
  const Tensor x = tandem::randn({2, 4}).to("cpu:1").detach().requires_grad_();
  const Tensor y = replicas[1]->forward(x);
  {
    tandem::NoGradGuard no_grad;
    fc->weight.mul_(2);
  }
  // Replica 1's graph saved the weight it read: the change is caught, as it
  // would be on one device, instead of giving a gradient of new values.
  EXPECT_TRUE(throws_with([&] { y.sum().backward(); },
                          "was modified by an in-place operation after it was saved"));
}

// A buffer the forward reads and saves for backward.
struct ScaledImpl : nn::Cloneable<ScaledImpl> {
  ScaledImpl() { reset(); }
  void reset() override { scale = register_buffer("scale", tandem::full({4}, 3.0)); }
  Tensor forward(const Tensor& x) { return x * scale; }
  Tensor scale;
};
TANDEM_MODULE(Scaled);

TEST(Replicate, BuffersAreRefreshedInPlaceUnlessAGraphHoldsThem) {
  Scaled module;
  const auto devices = cpu_devices(2);
  parallel::ReplicaCache cache;
  auto first = parallel::replicate(module, devices, &cache);
  void* memory = first[1]->scale.data_ptr();
  EXPECT_NE(memory, module->scale.data_ptr());
  EXPECT_EQ(parallel::replicate(module, devices, &cache)[1]->scale.data_ptr(), memory);
  // A forward saves replica 1's buffer for its backward: the next call must
  // leave that memory alone, and the old graph keeps the old values.
  Tensor x = tandem::randn({2, 4}).to("cpu:1").detach().requires_grad_();
  const Tensor y = first[1]->forward(x);
  module->scale.fill_(5.0);
  auto second = parallel::replicate(module, devices, &cache);
  EXPECT_NE(second[1]->scale.data_ptr(), memory);
  EXPECT_TRUE(all_close(second[1]->scale.to("cpu:0"), tandem::full({4}, 5.0), 0, 0));
  y.sum().backward();
  EXPECT_TRUE(all_close(x.grad().to("cpu:0"), tandem::full({2, 4}, 3.0), 0, 0));
}

TEST(Replicate, Errors) {
  nn::Sequential split(nn::Linear(2, 2), nn::Linear(2, 2));
  split->ptr(1)->to(Device("cpu:1"));
  EXPECT_TRUE(
      throws_with([&] { parallel::replicate(split, cpu_devices(2)); },
                  "replicate: all parameters and buffers of Sequential must be on "
                  "one device, but found cpu:0 and cpu:1"));
  struct PlainImpl : nn::Module {
    Tensor forward(const Tensor& x) { return x; }
  };
  EXPECT_TRUE(throws_with(
      [] { parallel::replicate(std::make_shared<PlainImpl>(), cpu_devices(2)); },
      "derive it from tandem::nn::Cloneable"));
}

}  // namespace
