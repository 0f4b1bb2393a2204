// Post-accumulate-grad hooks and queue_callback, the two engine features
// DistributedDataParallel is built on: a hook sees .grad after the pass has
// added into it; a queued callback runs once the whole pass is done, on
// the thread that called backward(), also when nodes ran on device threads.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

TEST(PostAccumulateGradHook, SeesTheAccumulatedGradient) {
  Tensor w = ones({3}, TensorOptions(kFloat64).requires_grad(true));
  std::vector<Tensor> seen;
  w.register_post_accumulate_grad_hook(
      [&](const Tensor& leaf) { seen.push_back(leaf.grad().clone()); });
  (w * 2).sum().backward();
  (w * 3).sum().backward();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_TRUE(testing::all_close(seen[0], full({3}, 2.0, kFloat64)));
  EXPECT_TRUE(testing::all_close(seen[1], full({3}, 5.0, kFloat64)));  // 2 + 3
}

TEST(PostAccumulateGradHook, RunsOncePerPassForALeafUsedTwice) {
  Tensor w = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  int calls = 0;
  w.register_post_accumulate_grad_hook([&](const Tensor&) { ++calls; });
  (w * w + w).sum().backward();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(testing::all_close(w.grad(), full({2}, 3.0, kFloat64)));
}

TEST(PostAccumulateGradHook, IsRemovedByRemoveHook) {
  Tensor w = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  int calls = 0;
  const size_t id = w.register_post_accumulate_grad_hook([&](const Tensor&) { ++calls; });
  w.remove_hook(id);
  w.sum().backward();
  EXPECT_EQ(calls, 0);
}

TEST(PostAccumulateGradHook, OnlyLeavesThatRequireGrad) {
  Tensor plain = ones({2});
  EXPECT_TRUE(testing::throws_with(
      [&] { plain.register_post_accumulate_grad_hook([](const Tensor&) {}); },
      "does not require grad"));
  Tensor w = ones({2}, TensorOptions().requires_grad(true));
  Tensor y = w * 2;
  EXPECT_TRUE(testing::throws_with(
      [&] { y.register_post_accumulate_grad_hook([](const Tensor&) {}); }, "grad_fn"));
}

TEST(QueueCallback, RunsAfterTheLastNodeOnTheCallingThread) {
  Tensor a = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  Tensor b = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  std::vector<std::string> events;
  a.register_post_accumulate_grad_hook([&](const Tensor&) {
    events.push_back("a");
    autograd::queue_callback([&] {
      events.push_back(b.grad().defined() ? "callback after b" : "callback before b");
    });
  });
  b.register_post_accumulate_grad_hook([&](const Tensor&) { events.push_back("b"); });
  (a * 2 + b * 3).sum().backward();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events.back(), "callback after b");
}

TEST(QueueCallback, RunsOnTheCallerWhenNodesRunOnDeviceThreads) {
  Tensor x = ones({3}, TensorOptions(kFloat64).requires_grad(true));
  std::thread::id hook_thread, callback_thread;
  Tensor y = x.to("cpu:1") * 2;
  y.register_hook([&](const Tensor& g) {
    hook_thread = std::this_thread::get_id();
    autograd::queue_callback([&] { callback_thread = std::this_thread::get_id(); });
    return Tensor();
  });
  y.to("cpu:0").sum().backward();
  EXPECT_NE(hook_thread, std::this_thread::get_id());
  EXPECT_EQ(callback_thread, std::this_thread::get_id());
}

TEST(QueueCallback, AThrowingCallbackEndsBackwardWithItsError) {
  Tensor w = ones({2}, TensorOptions(kFloat64).requires_grad(true));
  w.register_post_accumulate_grad_hook([](const Tensor&) {
    autograd::queue_callback([] { throw Error("from the callback"); });
  });
  EXPECT_TRUE(testing::throws_with([&] { w.sum().backward(); }, "from the callback"));
}

TEST(QueueCallback, RefusedOutsideBackward) {
  EXPECT_TRUE(testing::throws_with([] { autograd::queue_callback([] {}); },
                                   "no backward pass is running"));
}

}  // namespace
}  // namespace tandem
