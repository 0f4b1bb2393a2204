// Tensor::backward and the engine: scalar and explicit gradients,
// retain_graph, accumulation, diamonds, long chains, devices, grad mode.
#include <thread>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

TEST(Backward, ScalarRootNeedsNoGradient) {
  Tensor x = tensor({3.0}, f64_grad());  // one element: implicit gradient 1
  (x * x * x).backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({27.0})));
  Tensor s = scalar_tensor(2.0, f64_grad());
  (s * s).backward();
  EXPECT_EQ(s.grad().dim(), 0);
  EXPECT_EQ(s.grad().item<double>(), 4.0);
}

TEST(Backward, NonScalarRootNeedsAGradient) {
  Tensor x = ones({3}, f64_grad());
  Tensor y = x * 2;
  EXPECT_TRUE(throws_with([&] { y.backward(); }, "non-scalar"));
  EXPECT_TRUE(throws_with([&] { y.backward(ones({2}, kFloat64)); }, "[2]"));
  EXPECT_TRUE(throws_with(
      [&] { y.backward(ones({3}, TensorOptions(kFloat64).device("cpu:1"))); }, "cpu:1"));
  EXPECT_TRUE(
      throws_with([&] { y.backward(ones({3})); }, "gradient 0 has dtype float32"));
  y.backward(tensor({1.0, 2.0, 3.0}));
  EXPECT_TRUE(all_close(x.grad(), tensor({2.0, 4.0, 6.0})));
}

TEST(Backward, RootMustRequireGrad) {
  Tensor y = ones({1}) * 2;
  EXPECT_TRUE(throws_with([&] { y.backward(); }, "does not require grad"));
}

TEST(Backward, SecondBackwardNeedsRetainGraph) {
  Tensor x = tensor({0.5, 1.0}, f64_grad());
  Tensor g = ones({2}, kFloat64);
  Tensor y = x.exp();
  y.backward(g);
  EXPECT_TRUE(
      throws_with([&] { y.backward(g); }, "backward through the graph a second time"));
  EXPECT_TRUE(throws_with([&] { y.backward(g); }, "ExpBackward"));

  Tensor x2 = tensor({0.5, 1.0}, f64_grad());
  Tensor y2 = x2.exp();
  y2.backward(g, /*retain_graph=*/true);
  y2.backward(g);
  EXPECT_TRUE(all_close(x2.grad(), x2.detach().exp() * 2));
}

TEST(Backward, GradAccumulatesOverCalls) {
  Tensor x = tensor({1.0, -2.0}, f64_grad());
  Tensor g = tensor({1.0, 1.0});
  (x * 3).backward(g);
  EXPECT_TRUE(all_close(x.grad(), tensor({3.0, 3.0})));
  (x * 3).backward(g);
  EXPECT_TRUE(all_close(x.grad(), tensor({6.0, 6.0})));
  x.mutable_grad() = Tensor();
  (x * x).backward(g);
  EXPECT_TRUE(all_close(x.grad(), tensor({2.0, -4.0})));
}

TEST(Backward, DiamondSumsBothPaths) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor a = x * 2;
  Tensor y = a * a + a * 3;  // dy/dx = (2a + 3) * 2
  y.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({14.0, 22.0})));
  Tensor z = tensor({2.0}, f64_grad());
  (z * z * z + z).backward();  // a leaf used three times
  EXPECT_TRUE(all_close(z.grad(), tensor({13.0})));
}

TEST(Backward, SeveralRootsAtOnce) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor a = x * 2, b = x * x;
  autograd::backward({a, b}, {ones({2}, kFloat64), tensor({1.0, 10.0})});
  EXPECT_TRUE(all_close(x.grad(), tensor({4.0, 42.0})));
  EXPECT_TRUE(throws_with(
      [&] {
        autograd::backward({a * 1, b * 1}, {ones({2}, kFloat64)});
      },
      "1 gradients for 2"));
}

TEST(Backward, LongChainRunsWithoutStackOverflow) {
  Tensor x = tensor({1.0}, f64_grad());
  Tensor y = x;
  for (int i = 0; i < 1000; ++i) y = y * 1.001;
  y.backward();
  EXPECT_NEAR(x.grad().item<double>(), std::pow(1.001, 1000), 1e-9);
  // A much deeper graph must also be freed without recursing per node.
  Tensor deep = x;
  for (int i = 0; i < 200000; ++i) deep = deep + 1;
  deep.backward(Tensor(), /*retain_graph=*/true);
  EXPECT_NEAR(x.grad().item<double>(), std::pow(1.001, 1000) + 1, 1e-9);
  EXPECT_EQ(autograd::grad({deep}, {x})[0].item<double>(), 1.0);
  deep = Tensor();
}

TEST(Backward, GradientReturnsToTheSourceDevice) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x.to("cpu:1") * 3;
  EXPECT_EQ(y.device(), Device("cpu:1"));
  y.backward(ones({2}, TensorOptions(kFloat64).device("cpu:1")));
  EXPECT_EQ(x.grad().device(), Device("cpu:0"));
  EXPECT_TRUE(all_close(x.grad(), tensor({3.0, 3.0})));
}

TEST(Backward, DtypeConversionIsDifferentiable) {
  Tensor x = tensor({1.5}, f64_grad());
  Tensor y = x.to(kFloat32) * 2;
  EXPECT_EQ(y.dtype(), kFloat32);
  y.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_EQ(x.grad().item<double>(), 2.0);
  Tensor i = x.to(kInt64);
  EXPECT_FALSE(i.requires_grad());
}

TEST(Backward, GradientsAreCastToTheInputsDtype) {
  Tensor x = tensor({1.5}, f64_grad());
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x * 2;
  }
  // A formula that answers in float32 for a float64 input.
  autograd::record_function(
      "SloppyBackward", {x}, {&out}, [](const autograd::tensor_list& g) {
        return autograd::tensor_list{(g[0] * 2).to(kFloat32)};
      });
  out.backward();
  EXPECT_EQ(x.grad().dtype(), kFloat64);
  EXPECT_EQ(x.grad().item<double>(), 2.0);
}

TEST(Backward, BackwardFormulasDoNotRecordHistory) {
  Tensor x = tensor({2.0}, f64_grad());
  (x * x).backward();
  EXPECT_FALSE(x.grad().requires_grad());
  EXPECT_TRUE(x.grad().is_leaf());
}

TEST(GradMode, NoGradGuardRecordsNothingAndRestores) {
  Tensor x = ones({2}, f64_grad());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(GradMode::is_enabled());
    Tensor y = x * 2;
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
    {
      EnableGradGuard enable;
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE(GradMode::is_enabled());
  Tensor z = x * 2;
  EXPECT_TRUE(z.requires_grad());
  EXPECT_NE(z.grad_fn(), nullptr);
  EXPECT_EQ(z.grad_fn()->name(), "MulBackward");
}

TEST(GradMode, IsThreadLocal) {
  Tensor x = ones({2}, f64_grad());
  NoGradGuard no_grad;
  bool other_enabled = false, other_records = false;
  std::thread worker([&] {
    other_enabled = GradMode::is_enabled();
    other_records = (x * 2).requires_grad();
  });
  worker.join();
  EXPECT_TRUE(other_enabled);
  EXPECT_TRUE(other_records);
  EXPECT_FALSE(GradMode::is_enabled());
}

TEST(Autograd, RequiresGradOnlyForFloatingPoint) {
  Tensor i = ones({2}, kInt64);
  EXPECT_TRUE(throws_with([&] { i.requires_grad_(); }, "floating-point"));
  EXPECT_FALSE(i.requires_grad());
  Tensor f = ones({2});
  f.requires_grad_();
  EXPECT_TRUE(f.requires_grad());
  f.requires_grad_(false);
  EXPECT_FALSE(f.requires_grad());
  Tensor g = ones({2}, requires_grad()) * 2;
  EXPECT_TRUE(throws_with([&] { g.requires_grad_(false); }, "non-leaf"));
}

TEST(Autograd, DetachSharesStorageWithoutHistory) {
  Tensor x = ones({3}, f64_grad());
  Tensor y = x * 2;
  Tensor d = y.detach();
  EXPECT_EQ(d.data_ptr(), y.data_ptr());
  EXPECT_FALSE(d.requires_grad());
  EXPECT_EQ(d.grad_fn(), nullptr);
  EXPECT_TRUE(d.is_leaf());
  d.fill_(5);  // visible through y: same storage
  EXPECT_EQ(y.data_ptr<double>()[0], 5.0);
  EXPECT_EQ(y._version(), d._version());
  Tensor e = x * 3;
  e.detach_();
  EXPECT_FALSE(e.requires_grad());
  EXPECT_TRUE(e.is_leaf());
}

}  // namespace
}  // namespace tandem
