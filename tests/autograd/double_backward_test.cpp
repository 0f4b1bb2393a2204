// Double backward: create_graph records the backward pass, so gradients can
// be differentiated again (gradient penalties, Hessian-vector products).
// Every op's second derivative is also checked in the op table
// (tests/consistency/op_cases_test.cpp).
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

TEST(DoubleBackward, SecondDerivativeOfACube) {
  Tensor x = tensor({1.0, -2.0, 3.0}, f64_grad());
  Tensor g = autograd::grad({(x * x * x).sum()}, {x}, {}, {}, /*create_graph=*/true)[0];
  EXPECT_TRUE(g.requires_grad());
  EXPECT_TRUE(all_close(g, tensor({3.0, 12.0, 27.0})));
  Tensor h = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(all_close(h, tensor({6.0, -12.0, 18.0})));
}

TEST(DoubleBackward, WithoutCreateGraphTheGradientHasNoHistory) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor g = autograd::grad({(x * x).sum()}, {x})[0];
  EXPECT_FALSE(g.requires_grad());
}

// exp saves its own result; the result here is a temporary nobody holds.
TEST(DoubleBackward, ThroughAnOpThatSavesItsOutput) {
  Tensor x = tensor({0.5, -1.0}, f64_grad());
  Tensor g = autograd::grad({exp(x).sum()}, {x}, {}, {}, true)[0];
  Tensor h = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(all_close(h, exp(x.detach())));
}

TEST(DoubleBackward, BackwardWithCreateGraphLeavesADifferentiableGrad) {
  std::vector<std::string> warnings;
  auto previous =
      set_warning_handler([&](const std::string& m) { warnings.push_back(m); });
  Tensor x = tensor({2.0, 3.0}, f64_grad());
  (x * x * x).sum().backward({}, {}, /*create_graph=*/true);
  set_warning_handler(previous);
  Tensor first = x.grad();  // 3x^2, with history
  ASSERT_TRUE(first.requires_grad());
  x.set_grad(Tensor());  // breaks the grad <-> leaf cycle the warning names
  first.sum().backward();
  EXPECT_TRUE(all_close(x.grad(), tensor({12.0, 18.0})));
  // The warning is given once per process, so it may have gone already.
  for (const std::string& w : warnings)
    EXPECT_NE(w.find("reference cycle"), std::string::npos);
}

TEST(DoubleBackward, CreateGraphRetainsTheGraphByDefault) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = (x * x).sum();
  autograd::grad({y}, {x}, {}, {}, /*create_graph=*/true);
  EXPECT_TRUE(all_close(autograd::grad({y}, {x})[0], tensor({2.0, 4.0})));
  EXPECT_TRUE(throws_with([&] { autograd::grad({y}, {x}); }, "second time"));
}

// The Hessian of mean cross-entropy over logits z is (diag(p) - p p^T) / N
// per row, p = softmax(z): checked as a Hessian-vector product.
TEST(DoubleBackward, CrossEntropyHessianVectorProduct) {
  Generator gen(7);
  Tensor z = randn({3, 4}, gen, kFloat64).requires_grad_();
  Tensor target = tensor({1.0, 0.0, 3.0}).to(kInt64);
  Tensor v = randn({3, 4}, gen, kFloat64);
  Tensor g = autograd::grad({cross_entropy(z, target)}, {z}, {}, {}, true)[0];
  Tensor hv = autograd::grad({(g * v).sum()}, {z})[0];
  Tensor p = softmax(z.detach(), 1);
  Tensor want = (p * v - p * sum(p * v, {1}, true)) / 3.0;
  EXPECT_TRUE(all_close(hv, want, 1e-12, 1e-12));
}

// A gradient penalty (WGAN-GP style) on a tanh MLP: the penalty's gradient
// with respect to the weights against finite differences.
TEST(DoubleBackward, GradientPenaltyOfAnMlpPassesGradgradcheck) {
  Generator gen(3);
  Tensor x = randn({4, 3}, gen, kFloat64).requires_grad_();
  Tensor w1 = randn({5, 3}, gen, kFloat64).requires_grad_();
  Tensor b1 = randn({5}, gen, kFloat64).requires_grad_();
  Tensor w2 = randn({1, 5}, gen, kFloat64).requires_grad_();
  auto critic = [](const tensor_list& in) {
    return linear(sigmoid(linear(tanh(in[0]), in[1], in[2])), in[3]);
  };
  auto check = autograd::gradgradcheck(critic, {x, w1, b1, w2});
  EXPECT_TRUE(check) << check.message;
}

TEST(DoubleBackward, AcrossDevices) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  // x^3 computed over three devices.
  Tensor y = ((x.to("cpu:1") * x.to("cpu:1")).to("cpu:2") * x.to("cpu:2")).to("cpu:0");
  Tensor g = autograd::grad({y.sum()}, {x}, {}, {}, true)[0];
  EXPECT_EQ(g.device(), Device("cpu:0"));
  Tensor h = autograd::grad({g.sum()}, {x})[0];
  EXPECT_TRUE(all_close(h, tensor({6.0, 12.0})));
}

// Under create_graph conv2d's backward is made of recorded convolutions;
// it must give the kernel's gradients for every geometry.
TEST(DoubleBackward, RecordedConvolutionBackwardEqualsTheKernels) {
  Generator gen(11);
  int checked = 0;
  for (int64_t groups : {1, 2}) {
    for (int64_t k : {1, 2, 3}) {
      for (int64_t stride : {1, 2, 3}) {
        for (int64_t padding : {0, 1, 2}) {
          for (int64_t dilation : {1, 2}) {
            for (int64_t size : {1, 4, 7}) {
              if (size + 2 * padding < dilation * (k - 1) + 1) continue;
              Tensor x = randn({2, 2 * groups, size, size + 1}, gen, kFloat64);
              Tensor w = randn({2 * groups, 2, k, k}, gen, kFloat64);
              Tensor b = randn({2 * groups}, gen, kFloat64);
              for (Tensor* t : {&x, &w, &b}) t->requires_grad_();
              Tensor out = conv2d(x, w, b, stride, padding, dilation, groups);
              Tensor y = (out * randn(out.sizes(), gen, kFloat64)).sum();
              tensor_list plain = autograd::grad({y}, {x, w, b}, {}, true);
              tensor_list recorded = autograd::grad({y}, {x, w, b}, {}, true, true);
              for (size_t i = 0; i < 3; ++i) {
                EXPECT_TRUE(all_close(recorded[i], plain[i], 1e-12, 1e-12))
                    << "gradient " << i << ": groups " << groups << " k " << k
                    << " stride " << stride << " padding " << padding << " dilation "
                    << dilation << " size " << size;
              }
              ++checked;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 250);
}

// A formula whose first derivative is right but which drops the saved
// tensor's history: gradgradcheck must notice.
TEST(DoubleBackward, GradgradcheckCatchesAWrongSecondDerivative) {
  auto square_losing_history = [](const tensor_list& in) {
    Tensor out = in[0].detach() * in[0].detach();
    const Tensor saved = in[0].detach();
    autograd::record_function("SquareBackward", {in[0]}, {&out}, [saved](tensor_list& g) {
      return tensor_list{g[0] * saved * 2};
    });
    return out;
  };
  Tensor x = tensor({1.5, -0.5}, f64_grad());
  EXPECT_TRUE(autograd::gradcheck(square_losing_history, {x}));
  EXPECT_FALSE(autograd::gradgradcheck(square_losing_history, {x}));
}

}  // namespace
}  // namespace tandem
