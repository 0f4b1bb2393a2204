// autograd::grad (functional gradients) and gradcheck itself.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

TEST(Grad, ReturnsGradientsAndLeavesDotGradAlone) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor w = tensor({3.0, 4.0}, f64_grad());
  Tensor y = x * w;
  tensor_list g = autograd::grad({y}, {x, w}, {ones({2}, kFloat64)});
  ASSERT_EQ(g.size(), 2u);
  EXPECT_TRUE(all_close(g[0], tensor({3.0, 4.0})));
  EXPECT_TRUE(all_close(g[1], tensor({1.0, 2.0})));
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(w.grad().defined());
}

TEST(Grad, OfAnIntermediateTensor) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor h = x * 2;
  Tensor y = h * h;
  tensor_list g = autograd::grad({y}, {h}, {ones({2}, kFloat64)});
  EXPECT_TRUE(all_close(g[0], tensor({4.0, 8.0})));
  EXPECT_FALSE(x.grad().defined());
}

// The gradient of a non-leaf is captured where it arrives; the node that
// made it, and everything below, does not run.
TEST(Grad, DoesNotRunTheNodesBelowACapturedTensor) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  int runs = 0;
  Tensor h = x.detach() * 2;
  autograd::record_function("Counting", {x}, {&h}, [&runs](tensor_list& g) {
    ++runs;
    return tensor_list{g[0] * 2};
  });
  tensor_list g = autograd::grad({(h * h).sum()}, {h});
  EXPECT_TRUE(all_close(g[0], tensor({4.0, 8.0})));
  EXPECT_EQ(runs, 0);
  autograd::grad({(h * h).sum()}, {x});
  EXPECT_EQ(runs, 1);
}

TEST(Grad, UnusedInputIsAnErrorUnlessAllowed) {
  Tensor x = tensor({1.0}, f64_grad());
  Tensor unused = tensor({5.0}, f64_grad());
  Tensor y = x * 2;
  EXPECT_TRUE(throws_with(
      [&] {
        autograd::grad({y}, {x, unused}, {}, true);
      },
      "input 1 (shape [1]) was not used"));
  tensor_list g = autograd::grad({y}, {x, unused}, {}, {}, false, /*allow_unused=*/true);
  EXPECT_EQ(g[0].item<double>(), 2.0);
  EXPECT_FALSE(g[1].defined());
}

TEST(Grad, InputsMustRequireGrad) {
  Tensor x = tensor({1.0}, f64_grad());
  Tensor c = tensor({1.0});
  EXPECT_TRUE(
      throws_with([&] { autograd::grad({x * c}, {c}); }, "does not require grad"));
}

TEST(Grad, RetainGraphAllowsASecondCall) {
  Tensor x = tensor({3.0}, f64_grad());
  Tensor y = x.exp();
  autograd::grad({y}, {x}, {}, /*retain_graph=*/true);
  tensor_list g = autograd::grad({y}, {x});
  EXPECT_NEAR(g[0].item<double>(), std::exp(3.0), 1e-12);
  EXPECT_TRUE(throws_with([&] { autograd::grad({y}, {x}); }, "second time"));
}

// Records a node computing x*x whose backward formula is `factor * g * x`:
// factor 2 is the right derivative, anything else is wrong.
Tensor square_with_backward(const Tensor& x, double factor) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x * x;
  }
  autograd::record_function(
      "TestSquareBackward",
      {x},
      {&out},
      [factor, saved = autograd::SavedVariable(x)](const tensor_list& g) {
        return tensor_list{g[0] * saved.unpack("TestSquareBackward") * factor};
      });
  return out;
}

TEST(Gradcheck, PassesARightGradientAndCatchesAWrongOne) {
  Tensor x = tensor({0.5, -1.5, 2.0}, f64_grad());
  auto right = autograd::gradcheck(
      [](const tensor_list& in) { return square_with_backward(in[0], 2.0); }, {x});
  EXPECT_TRUE(right) << right.message;
  auto wrong = autograd::gradcheck(
      [](const tensor_list& in) { return square_with_backward(in[0], 2.1); }, {x});
  EXPECT_FALSE(wrong);
  EXPECT_NE(wrong.message.find("input 0"), std::string::npos) << wrong.message;
  EXPECT_NE(wrong.message.find("TestSquareBackward"), std::string::npos) << wrong.message;
  EXPECT_FALSE(x.grad().defined()) << "gradcheck leaves .grad alone";
  EXPECT_TRUE(all_close(x, tensor({0.5, -1.5, 2.0}))) << "inputs are restored";
}

TEST(Gradcheck, ChecksOnlyInputsThatRequireGrad) {
  Tensor x = tensor({0.5, 1.5}, f64_grad());
  Tensor c = tensor({2.0, 3.0});
  auto r =
      autograd::gradcheck([](const tensor_list& in) { return in[0] * in[1]; }, {x, c});
  EXPECT_TRUE(r) << r.message;
}

TEST(Gradcheck, RefusesFloat32AndOutputsWithoutGrad) {
  Tensor f = tensor({1.0f}, requires_grad());
  EXPECT_TRUE(throws_with(
      [&] { autograd::gradcheck([](const tensor_list& in) { return in[0] * 2; }, {f}); },
      "float64"));
  Tensor x = tensor({1.0}, f64_grad());
  EXPECT_TRUE(throws_with(
      [&] { autograd::gradcheck([](const tensor_list&) { return ones({1}); }, {x}); },
      "does not require grad"));
}

}  // namespace
}  // namespace tandem
