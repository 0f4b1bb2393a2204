// In-place ops under autograd: refused on leaves, rebased on non-leaves,
// and the version check on tensors saved for backward.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

TEST(InPlace, OnALeafThatRequiresGradIsRefused) {
  Tensor w = ones({2}, f64_grad());
  EXPECT_TRUE(throws_with([&] { w.add_(1); }, "add_: a leaf tensor that requires grad"));
  EXPECT_TRUE(throws_with([&] { w.mul_(ones({2}, kFloat64)); }, "mul_:"));
  EXPECT_TRUE(throws_with([&] { w.zero_(); }, "fill_:"));
  EXPECT_TRUE(throws_with([&] { w.copy_(zeros({2})); }, "copy_:"));
  EXPECT_TRUE(throws_with([&] { relu_(w); }, "relu_:"));
  EXPECT_EQ(w.data_ptr<double>()[0], 1.0) << "nothing was written";
  {
    NoGradGuard no_grad;  // the optimizer's way
    w.sub_(ones({2}, kFloat64), 0.5);
  }
  EXPECT_EQ(w.data_ptr<double>()[0], 0.5);
  EXPECT_TRUE(w.requires_grad());
  EXPECT_TRUE(w.is_leaf());
}

TEST(InPlace, OnAViewOfALeafIsRefusedAndOfANonLeafRebasesTheBase) {
  Tensor w = ones({2, 3}, f64_grad());
  EXPECT_TRUE(throws_with([&] { w.narrow(0, 0, 1).add_(1); },
                          "add_: a view of a leaf tensor that requires grad"));
  Tensor y = w * 2;
  y.select(0, 1).mul_(2);  // as in PyTorch: y's history now says so
  y.sum().backward();
  EXPECT_TRUE(all_close(w.grad(), tensor({2.0, 2.0, 2.0, 4.0, 4.0, 4.0}).view({2, 3})));
  Tensor plain = zeros({2, 3});
  plain.select(0, 1).fill_(4);  // no autograd involved: allowed
  EXPECT_EQ(plain.data_ptr<float>()[3], 4.0f);
}

TEST(InPlace, OnANonLeafRebasesHistory) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 2;
  y.add_(1);
  EXPECT_TRUE(all_close(y, tensor({3.0, 5.0})));
  EXPECT_FALSE(y.is_leaf());
  y.mul_(x);  // y = (2x + 1) * x, dy/dx = 4x + 1
  y.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({5.0, 9.0})));
}

TEST(InPlace, ScalarAndUnaryVariantsOnNonLeaves) {
  Tensor x = tensor({-1.0, 0.5, 3.0}, f64_grad());
  Tensor y = x * 1;
  y.mul_(3).sub_(1).div_(2);  // (3x - 1) / 2
  y.clamp_(-1, 2);            // y = [-2, 0.25, 4]: both ends clamped
  y.backward(ones({3}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({0.0, 1.5, 0.0})));
  Tensor z = x * 1;
  relu_(z);
  z.backward(ones({3}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({0.0, 2.5, 1.0})));
}

TEST(InPlace, FillAndZeroCutTheGradient) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 2;
  y.zero_();
  EXPECT_TRUE(y.requires_grad());
  (y + x).backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({1.0, 1.0})));
}

TEST(InPlace, CopyIntoANonLeafRoutesTheGradientToTheSource) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor s = tensor({4.0}, f64_grad());
  Tensor y = x * 2;
  y.copy_(s * 3);  // broadcast [1] -> [2]
  y.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({0.0, 0.0})));
  EXPECT_TRUE(all_close(s.grad(), tensor({6.0})));
}

TEST(InPlace, CopyFromAGradTensorIntoAPlainOneStartsHistory) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor buf = zeros({2}, kFloat64);
  buf.copy_(x);
  EXPECT_TRUE(buf.requires_grad());
  (buf * buf).backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({2.0, 4.0})));
}

TEST(InPlace, ModifyingASavedOutputIsCaughtAtBackward) {
  Tensor x = tensor({0.0, 1.0}, f64_grad());
  Tensor y = x.exp();  // ExpBackward saves its result, y
  y.add_(1);
  try {
    y.backward(ones({2}, kFloat64));
    FAIL() << "expected the version-counter error";
  } catch (const Error& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("ExpBackward"), std::string::npos) << what;
    EXPECT_NE(what.find("modified by an in-place operation"), std::string::npos) << what;
    EXPECT_NE(what.find("version 1"), std::string::npos) << what;
  }
}

TEST(InPlace, ModifyingASavedInputIsCaughtAtBackward) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor h = x * 1;
  Tensor y = h * x;  // MulBackward saves h for x's gradient
  {
    NoGradGuard no_grad;
    h.add_(1);
  }
  EXPECT_TRUE(throws_with([&] { y.backward(ones({2}, kFloat64)); }, "MulBackward"));
}

TEST(InPlace, UnsavedChangeIsFine) {
  Tensor x = tensor({1.0, 2.0}, f64_grad());
  Tensor y = x * 2;  // MulBackward by a scalar saves nothing
  Tensor z = y + 1;
  y.add_(5);
  z.backward(ones({2}, kFloat64));
  EXPECT_TRUE(all_close(x.grad(), tensor({2.0, 2.0})));
}

}  // namespace
}  // namespace tandem
