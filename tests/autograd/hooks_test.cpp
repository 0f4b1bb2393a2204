// Tensor hooks on leaves and non-leaves, remove_hook, and retain_grad.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

TEST(Hooks, LeafHookReplacesTheGradient) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor seen;
  size_t id = x.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return g * 10;
  });
  (x * 3).backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(seen, tensor({3.0, 3.0})));
  EXPECT_TRUE(all_close(x.grad(), tensor({30.0, 30.0})));
  x.remove_hook(id);
  x.mutable_grad() = Tensor();
  (x * 3).backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({3.0, 3.0})));
}

TEST(Hooks, ObserverHookLeavesTheGradientAlone) {
  Tensor x = tensor({1.0}, f64_grad());
  int calls = 0;
  x.register_hook([&](const Tensor&) {
    ++calls;
    return Tensor();
  });
  (x * 4).backward();
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(x.grad().item<double>(), 4.0);
}

TEST(Hooks, HooksRunInRegistrationOrder) {
  Tensor x = tensor({1.0}, f64_grad());
  x.register_hook([](const Tensor& g) { return g + 1; });
  x.register_hook([](const Tensor& g) { return g * 10; });
  (x * 2).backward();
  EXPECT_EQ(x.grad().item<double>(), 30.0);
}

TEST(Hooks, NonLeafHookChangesWhatFlowsUpstream) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 2;
  Tensor seen;
  size_t id = y.register_hook([&](const Tensor& g) {
    seen = g.clone();
    return g * -1;
  });
  Tensor z = y * y;  // dz/dy = 2y = [4, 8]
  z.backward(ones({2}, kFloat64), /*retain_graph=*/true);
  EXPECT_TRUE(all_close(seen, tensor({4.0, 8.0})));
  EXPECT_TRUE(all_close(x.grad(), tensor({-8.0, -16.0})));
  EXPECT_FALSE(y.grad().defined()) << "a hook does not retain the gradient";
  y.remove_hook(id);
  x.mutable_grad() = Tensor();
  z.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({8.0, 16.0})));
}

TEST(Hooks, AHookMustKeepTheGradientsShape) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  x.register_hook([](const Tensor&) { return ones({5}, kFloat64); });
  EXPECT_TRUE(throws_with([&] { (x * 2).backward(ones({2}, kFloat64)); },
                          "hook: a tensor hook returned a gradient of shape [5]"));
  Tensor y = tensor({1.0}, f64_grad()) * 2;
  y.register_hook([](const Tensor& g) { return g.to("cpu:1"); });
  EXPECT_TRUE(throws_with([&] { (y * 2).backward(); }, "on cpu:1"));
}

TEST(Hooks, HookNeedsRequiresGrad) {
  Tensor c = ones({2});
  EXPECT_TRUE(throws_with([&] { c.register_hook([](const Tensor& g) { return g; }); },
                          "does not require grad"));
}

TEST(RetainGrad, KeepsTheGradientOfANonLeaf) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 3;
  Tensor w = y * 1;  // not retained
  y.retain_grad();
  EXPECT_TRUE(y.retains_grad());
  (w * y).backward(ones({2}, kFloat64), /*retain_graph=*/true);
  // d(w*y)/dy through both paths: w + y*1 = 2y.
  EXPECT_TRUE(all_close(y.grad(), tensor({6.0, 12.0})));
  EXPECT_FALSE(w.grad().defined());
  (w * y).backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(y.grad(), tensor({12.0, 24.0}))) << "accumulates like a leaf";
  EXPECT_TRUE(all_close(x.grad(), tensor({36.0, 72.0})));
}

TEST(RetainGrad, OnALeafIsANoOpAndNeedsRequiresGrad) {
  Tensor x = tensor({1.0}, f64_grad());
  x.retain_grad();
  (x * 5).backward();
  EXPECT_EQ(x.grad().item<double>(), 5.0);
  Tensor c = ones({1});
  EXPECT_TRUE(throws_with([&] { c.retain_grad(); }, "does not require grad"));
}

// AccumulateGrad keeps a gradient nothing else holds as .grad (no copy),
// and copies one that something else still holds.
TEST(Hooks, AnUnsharedGradientBecomesGradWithoutACopy) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  const void* seen = nullptr;
  x.register_hook([&](const Tensor& g) {
    seen = g.data_ptr();
    return Tensor();
  });
  (x * 3).backward(ones({2}, kFloat64));
  EXPECT_EQ(x.grad().data_ptr(), seen);

  Tensor z = tensor({1.0, 2.0}, f64_grad());
  Tensor kept;
  z.register_hook([&](const Tensor& g) {
    kept = g;
    return Tensor();
  });
  (z * 3).backward(ones({2}, kFloat64));
  EXPECT_NE(z.grad().data_ptr(), kept.data_ptr());
  z.mutable_grad().add_(1);
  EXPECT_TRUE(all_close(kept, full({2}, 3.0, TensorOptions(kFloat64))));
}

}  // namespace
}  // namespace tandem
