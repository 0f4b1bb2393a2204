// The engine on graphs that span devices: each node runs on its device's
// worker (the caller for the caller's own device, an executor thread for
// the others), so branches on different devices run at the same time, and
// the results equal those of a single-device graph.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

TEST(DeviceThreads, CrossDeviceGraphGivesTheSingleDeviceGradient) {
  Tensor x = randn({4, 3}, TensorOptions(kFloat64).requires_grad(true));
  Tensor a = (x.to("cpu:1") * 2).exp().to("cpu:0");
  Tensor b = (x.to("cpu:2") + 1).pow(2).to("cpu:0");
  (a + b).sum().backward();
  Tensor want = (x.detach() * 2).exp() * 2 + (x.detach() + 1) * 2;
  EXPECT_TRUE(testing::all_close(x.grad(), want, 1e-12, 1e-12));
  EXPECT_EQ(x.grad().device(), Device("cpu:0"));
}

TEST(DeviceThreads, NodesRunOnTheirDevicesThreads) {
  Tensor x = randn({3}, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = x.to("cpu:1") * 3;
  Device seen = Device(kCPU);
  std::thread::id thread;
  y.register_hook([&](const Tensor& g) {
    seen = current_device();
    thread = std::this_thread::get_id();
    return Tensor();
  });
  y.to("cpu:0").sum().backward();
  EXPECT_EQ(seen, Device("cpu:1"));
  EXPECT_NE(thread, std::this_thread::get_id());
  EXPECT_TRUE(testing::all_close(x.grad(), full({3}, 3.0, kFloat64)));
}

TEST(DeviceThreads, TheCallersDeviceNodesRunOnTheCaller) {
  Tensor x = randn({3}, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = x.to("cpu:1") * 3;
  Tensor z = y.to("cpu:0") * 2;
  std::thread::id on_cpu0, on_cpu1;
  Device seen0(kCPU), seen1(kCPU);
  z.register_hook([&](const Tensor&) {
    on_cpu0 = std::this_thread::get_id();
    seen0 = current_device();
    return Tensor();
  });
  y.register_hook([&](const Tensor&) {
    on_cpu1 = std::this_thread::get_id();
    seen1 = current_device();
    return Tensor();
  });
  z.sum().backward();  // cpu:0 is current
  EXPECT_EQ(on_cpu0, std::this_thread::get_id());
  EXPECT_EQ(seen0, Device("cpu:0"));
  EXPECT_NE(on_cpu1, std::this_thread::get_id());
  EXPECT_EQ(seen1, Device("cpu:1"));
  EXPECT_FALSE(in_executor_thread());  // the caller's scope ended with the pass
  EXPECT_TRUE(testing::all_close(x.grad(), full({3}, 6.0, kFloat64)));
}

TEST(DeviceThreads, BranchesOnTwoDevicesRunConcurrently) {
  set_num_threads(2);
  Tensor x = randn({3}, TensorOptions(kFloat64).requires_grad(true));
  std::atomic<int> arrived{0};
  std::atomic<bool> both_met{true};
  // Each branch's hook waits (with a deadline) until the other branch's
  // hook has started: only concurrent execution lets both finish early.
  auto rendezvous = [&](const Tensor&) {
    ++arrived;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (arrived.load() < 2) {
      if (std::chrono::steady_clock::now() > deadline) {
        both_met = false;
        break;
      }
      std::this_thread::yield();
    }
    return Tensor();
  };
  Tensor a = x.to("cpu:1") * 2;
  Tensor b = x.to("cpu:2") * 5;
  a.register_hook(rendezvous);
  b.register_hook(rendezvous);
  (a.to("cpu:0") + b.to("cpu:0")).sum().backward();
  EXPECT_TRUE(both_met.load());
  EXPECT_TRUE(testing::all_close(x.grad(), full({3}, 7.0, kFloat64)));
}

TEST(DeviceThreads, AnErrorOnADeviceThreadReachesTheCaller) {
  Tensor x = randn({3}, TensorOptions(kFloat64).requires_grad(true));
  Tensor y = x.to("cpu:1") * 2;
  y.register_hook(
      [](const Tensor& g) -> Tensor { throw Error("hook failed on purpose"); });
  EXPECT_TRUE(testing::throws_with([&] { y.to("cpu:0").sum().backward(); },
                                   "hook failed on purpose"));
  // The engine is still usable afterwards.
  Tensor z = x.to("cpu:1") * 4;
  z.to("cpu:0").sum().backward();
  EXPECT_TRUE(testing::all_close(x.grad(), full({3}, 4.0, kFloat64)));
}

}  // namespace
}  // namespace tandem
