// Matrix products: values against a textbook loop, every operand layout the
// BLAS path takes (transposed views, row strides, copies, broadcast batches,
// empty dims), PyTorch's matmul rules, linear, errors and gradcheck.
#include <gtest/gtest.h>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

const TensorOptions kF64Grad = TensorOptions(kFloat64).requires_grad(true);

// a @ b by the triple loop, in float64, whatever the layouts.
Tensor naive_mm(const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  Tensor ac = a.to(kFloat64).contiguous(), bc = b.to(kFloat64).contiguous();
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  Tensor out = zeros({m, n}, kFloat64);
  const double* pa = ac.data_ptr<double>();
  const double* pb = bc.data_ptr<double>();
  double* po = out.data_ptr<double>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t p = 0; p < k; ++p) po[i * n + j] += pa[i * k + p] * pb[p * n + j];
    }
  }
  return out;
}

::testing::AssertionResult grad_ok(const autograd::GradcheckFn& fn,
                                   const tensor_list& inputs) {
  auto r = gradcheck(fn, inputs);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

class LinalgTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(7); }
};

// ---- mm and the gemm kernel ----

TEST_F(LinalgTest, MmSmallValues) {
  Tensor a = tensor<float>({1, 2, 3, 4, 5, 6}).reshape({2, 3});
  Tensor b = tensor<float>({7, 8, 9, 10, 11, 12}).reshape({3, 2});
  Tensor want = tensor<float>({58, 64, 139, 154}).reshape({2, 2});
  EXPECT_TRUE(all_close(mm(a, b), want));
  EXPECT_TRUE(all_close(a.mm(b), want));
  EXPECT_EQ(mm(a, b).dtype(), kFloat32);
}

TEST_F(LinalgTest, MmEveryOperandLayout) {
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const double tol = dtype == kFloat32 ? 1e-5 : 1e-12;
    std::vector<Tensor> lefts = {
        randn({5, 7}, dtype),                      // row-major
        randn({7, 5}, dtype).t(),                  // transposed view
        randn({5, 14}, dtype).narrow(1, 3, 7),     // leading dim 14
        randn({7, 5, 2}, dtype).select(2, 1).t(),  // no unit stride: copied
        randn({1, 7}, dtype).expand({5, 7}),       // stride-0 rows: copied
    };
    std::vector<Tensor> rights = {
        randn({7, 4}, dtype),
        randn({4, 7}, dtype).t(),
        randn({7, 1}, dtype),                      // a column
        randn({3, 7}, dtype).narrow(0, 1, 1).t(),  // a column of a view
    };
    for (const Tensor& x : lefts) {
      for (const Tensor& y : rights) {
        EXPECT_TRUE(all_close(mm(x, y), naive_mm(x, y).to(dtype), tol, tol))
            << x.sizes() << " strides " << x.strides() << " @ " << y.sizes()
            << " strides " << y.strides();
      }
    }
  }
}

TEST_F(LinalgTest, MmWithEmptyDims) {
  EXPECT_EQ(mm(randn({0, 3}), randn({3, 4})).sizes(), (IntList{0, 4}));
  EXPECT_EQ(mm(randn({2, 3}), randn({3, 0})).sizes(), (IntList{2, 0}));
  // k == 0: a sum of nothing, so zeros (the output starts uninitialised).
  EXPECT_TRUE(all_close(mm(randn({2, 0}), randn({0, 3})), zeros({2, 3})));
  EXPECT_TRUE(all_close(bmm(randn({2, 3, 0}), randn({2, 0, 4})), zeros({2, 3, 4})));
}

// ---- bmm ----

TEST_F(LinalgTest, BmmMatchesMmPerBatch) {
  Tensor a = randn({3, 4, 5}, kFloat64);
  Tensor b = randn({3, 6, 5}, kFloat64).transpose(1, 2);  // transposed batches
  Tensor out = bmm(a, b);
  ASSERT_EQ(out.sizes(), (IntList{3, 4, 6}));
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(all_close(out[i], naive_mm(a[i], b[i]), 1e-12, 1e-12));
  }
  // A broadcast batch (stride 0) is read in place.
  Tensor shared = randn({1, 5, 2}, kFloat64).expand({3, 5, 2});
  Tensor out2 = a.bmm(shared);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_TRUE(all_close(out2[i], naive_mm(a[i], shared[0]), 1e-12, 1e-12));
  }
}

// ---- matmul: PyTorch's rules ----

TEST_F(LinalgTest, MatmulVectorCases) {
  Tensor v = tensor<double>({1, 2, 3}), w = tensor<double>({4, 5, 6});
  Tensor dot = matmul(v, w);
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_DOUBLE_EQ(dot.item<double>(), 32);
  Tensor m = tensor<double>({1, 0, 2, 0, 1, 3}).reshape({2, 3});
  EXPECT_TRUE(all_close(matmul(m, v), tensor<double>({7, 11})));  // mv
  EXPECT_TRUE(all_close(matmul(tensor<double>({1, 2}), m),        // vm
                        tensor<double>({1, 2, 8})));
  EXPECT_TRUE(all_close(v.matmul(m.t()), tensor<double>({7, 11})));
}

TEST_F(LinalgTest, MatmulBatchedShapesAndValues) {
  struct Case {
    IntList a, b, want;
  };
  const std::vector<Case> cases = {
      {{2, 3, 4}, {4, 5}, {2, 3, 5}},           // folded into one gemm
      {{2, 3, 4}, {4}, {2, 3}},                 // batched matrix-vector
      {{4}, {2, 4, 5}, {2, 5}},                 // vector times batch
      {{3, 4}, {2, 4, 5}, {2, 3, 5}},           // matrix broadcast over batch
      {{2, 1, 3, 4}, {5, 4, 2}, {2, 5, 3, 2}},  // batch dims broadcast
      {{2, 3, 4}, {2, 4, 5}, {2, 3, 5}},
  };
  for (const Case& c : cases) {
    Tensor a = randn(c.a, kFloat64), b = randn(c.b, kFloat64);
    Tensor out = matmul(a, b);
    ASSERT_EQ(out.sizes(), c.want) << c.a << " @ " << c.b;
    // Check every matrix of the result against the loop, broadcasting by hand.
    Tensor a3 = a.dim() == 1 ? a.unsqueeze(0) : a;
    Tensor b3 = b.dim() == 1 ? b.unsqueeze(-1) : b;
    IntList batch(c.want.begin(), c.want.end() - (a.dim() > 1) - (b.dim() > 1));
    IntList full = batch;
    full.insert(full.end(), {a3.size(-2), b3.size(-1)});
    Tensor o = out.reshape(full).reshape({-1, a3.size(-2), b3.size(-1)});
    IntList ea = batch, eb = batch;
    ea.insert(ea.end(), {a3.size(-2), a3.size(-1)});
    eb.insert(eb.end(), {b3.size(-2), b3.size(-1)});
    Tensor as = a3.expand(ea).reshape({-1, a3.size(-2), a3.size(-1)});
    Tensor bs = b3.expand(eb).reshape({-1, b3.size(-2), b3.size(-1)});
    for (int64_t i = 0; i < o.size(0); ++i) {
      EXPECT_TRUE(all_close(o[i], naive_mm(as[i], bs[i]), 1e-12, 1e-12))
          << c.a << " @ " << c.b << " batch " << i;
    }
  }
}

// ---- linear ----

TEST_F(LinalgTest, LinearMatchesMatmulPlusBias) {
  Tensor w = randn({5, 4}, kFloat64), bias = randn({5}, kFloat64);
  for (const IntList& shape : {IntList{3, 4}, IntList{2, 3, 4}, IntList{4}}) {
    Tensor x = randn(shape, kFloat64);
    Tensor ref = matmul(x, w.t());
    EXPECT_TRUE(all_close(linear(x, w, bias), ref + bias, 1e-12, 1e-12)) << shape;
    EXPECT_TRUE(all_close(linear(x, w), ref, 1e-12, 1e-12)) << shape;
  }
  // Non-contiguous input and a transposed-view weight.
  Tensor xt = randn({4, 3}, kFloat64).t();
  Tensor wt = randn({4, 5}, kFloat64).t();
  EXPECT_TRUE(all_close(linear(xt, wt, bias), naive_mm(xt, wt.t()) + bias, 1e-12, 1e-12));
}

TEST_F(LinalgTest, LinearWithoutFeaturesIsTheBias) {
  Tensor bias = tensor<float>({1, 2, 3});
  Tensor out = linear(randn({2, 0}), randn({3, 0}), bias);
  EXPECT_TRUE(all_close(out, bias.expand({2, 3})));
  EXPECT_EQ(linear(randn({0, 4}), randn({3, 4}), bias).sizes(), (IntList{0, 3}));
}

// ---- errors ----

TEST_F(LinalgTest, ErrorMessages) {
  EXPECT_TRUE(throws_with(
      [] {
        mm(randn({2, 3, 4}), randn({4, 5}));
      },
      "mm: expected 2-D tensors, got shapes [2, 3, 4] and [4, 5]"));
  EXPECT_TRUE(throws_with(
      [] {
        mm(randn({2, 3}), randn({4, 5}));
      },
      "mm: shapes [2, 3] and [4, 5] cannot be multiplied (3 != 4)"));
  EXPECT_TRUE(throws_with(
      [] {
        mm(randn({2, 3}), randn({3, 2}, kFloat64));
      },
      "mm: expected tensors of one dtype, got float32 and float64"));
  EXPECT_TRUE(throws_with(
      [] {
        mm(ones({2, 2}, kInt64), ones({2, 2}, kInt64));
      },
      "mm: expected float32 or float64 tensors, got int64 and int64"));
  EXPECT_TRUE(throws_with(
      [] {
        mm(randn({2, 2}), randn({2, 2}).to(Device("cpu:1")));
      },
      "mm: expected all tensors on the same device, got cpu:0 and cpu:1"));
  EXPECT_TRUE(throws_with(
      [] {
        bmm(randn({2, 3}), randn({2, 3, 4}));
      },
      "bmm: expected 3-D tensors, got shapes [2, 3] and [2, 3, 4]"));
  EXPECT_TRUE(throws_with(
      [] {
        bmm(randn({2, 3, 4}), randn({3, 4, 5}));
      },
      "bmm: shapes [2, 3, 4] and [3, 4, 5] have different batch "
      "sizes (2 != 3)"));
  EXPECT_TRUE(throws_with(
      [] {
        bmm(randn({2, 3, 4}), randn({2, 5, 5}));
      },
      "bmm: shapes [2, 3, 4] and [2, 5, 5] cannot be multiplied (4 != 5)"));
  EXPECT_TRUE(throws_with([] { matmul(randn({3}), randn({4})); },
                          "matmul: shapes [3] and [4] cannot be multiplied (3 != 4)"));
  EXPECT_TRUE(throws_with(
      [] {
        matmul(randn({2, 3, 4}), randn({3, 4, 5}));
      },
      "matmul: batch dimensions of [2, 3, 4] and [3, 4, 5]"));
  EXPECT_TRUE(throws_with([] { matmul(scalar_tensor(1), randn({3})); },
                          "matmul: expected tensors with at least 1 dimension"));
  EXPECT_TRUE(throws_with(
      [] {
        linear(randn({30, 4}), randn({3, 5}));
      },
      "linear: input has 4 features (shape [30, 4]) but weight expects 5"));
  EXPECT_TRUE(throws_with(
      [] {
        linear(randn({30, 5}), randn({3, 5}), randn({4}));
      },
      "linear: expected bias of shape [3]"));
  EXPECT_TRUE(throws_with(
      [] {
        linear(randn({30, 5}), randn({5}));
      },
      "linear: expected weight of shape [out_features, in_features]"));
  EXPECT_TRUE(throws_with(
      [] {
        linear(randn({3, 5}), randn({2, 5}), randn({2}, kFloat64));
      },
      "linear: bias has dtype float64 but weight has float32"));
  EXPECT_TRUE(throws_with(
      [] {
        linear(randn({3, 5}), Tensor());
      },
      "linear: argument 'weight' is undefined"));
}

// ---- autograd ----

TEST_F(LinalgTest, MmGradcheck) {
  auto f = [](const tensor_list& in) { return mm(in[0], in[1]); };
  EXPECT_TRUE(grad_ok(f, {randn({3, 4}, kF64Grad), randn({4, 2}, kF64Grad)}));
  EXPECT_TRUE(grad_ok(f, {randn({3, 4}, kF64Grad), randn({4, 2}, kFloat64)}));
  EXPECT_TRUE(grad_ok(f, {randn({3, 4}, kFloat64), randn({4, 2}, kF64Grad)}));
  // Through transposed views on both sides.
  auto ft = [](const tensor_list& in) { return mm(in[0].t(), in[1].t()); };
  EXPECT_TRUE(grad_ok(ft, {randn({4, 3}, kF64Grad), randn({2, 4}, kF64Grad)}));
}

TEST_F(LinalgTest, BmmGradcheck) {
  auto f = [](const tensor_list& in) { return bmm(in[0], in[1]); };
  EXPECT_TRUE(grad_ok(f, {randn({2, 3, 4}, kF64Grad), randn({2, 4, 2}, kF64Grad)}));
  EXPECT_TRUE(grad_ok(f, {randn({2, 3, 4}, kFloat64), randn({2, 4, 2}, kF64Grad)}));
}

TEST_F(LinalgTest, MatmulGradcheckEveryRule) {
  auto f = [](const tensor_list& in) { return matmul(in[0], in[1]); };
  const std::vector<std::pair<IntList, IntList>> shapes = {
      {{3}, {3}},
      {{2, 3}, {3}},
      {{3}, {3, 2}},
      {{2, 3}, {3, 4}},
      {{2, 2, 3}, {3}},
      {{2, 2, 3}, {3, 4}},
      {{3}, {2, 3, 4}},
      {{2, 3}, {2, 3, 2}},
      {{2, 1, 2, 3}, {3, 3, 2}},  // broadcast batch: the gradient sums it back
  };
  for (const auto& [sa, sb] : shapes) {
    EXPECT_TRUE(grad_ok(f, {randn(sa, kF64Grad), randn(sb, kF64Grad)}))
        << sa << " @ " << sb;
  }
}

TEST_F(LinalgTest, LinearGradcheck) {
  auto with_bias = [](const tensor_list& in) { return linear(in[0], in[1], in[2]); };
  auto without = [](const tensor_list& in) { return linear(in[0], in[1]); };
  Tensor w = randn({3, 4}, kF64Grad), b = randn({3}, kF64Grad);
  EXPECT_TRUE(grad_ok(with_bias, {randn({5, 4}, kF64Grad), w, b}));
  EXPECT_TRUE(grad_ok(with_bias, {randn({2, 5, 4}, kF64Grad), w, b}));  // 3-D input
  EXPECT_TRUE(grad_ok(with_bias, {randn({4}, kF64Grad), w, b}));        // 1-D input
  EXPECT_TRUE(grad_ok(without, {randn({2, 5, 4}, kF64Grad), w}));
  EXPECT_TRUE(grad_ok(with_bias, {randn({5, 4}, kFloat64), w, randn({3}, kFloat64)}));
  // Non-contiguous gradient and input: linear followed by a transpose.
  auto permuted = [](const tensor_list& in) {
    return linear(in[0].transpose(0, 1), in[1], in[2]).transpose(0, 1);
  };
  EXPECT_TRUE(grad_ok(permuted, {randn({5, 2, 4}, kF64Grad), w, b}));
}

TEST_F(LinalgTest, LinearGradientsMatchTheFormulas) {
  Tensor x = randn({2, 3, 4}, kF64Grad), w = randn({5, 4}, kF64Grad);
  Tensor b = randn({5}, kF64Grad);
  Tensor g = randn({2, 3, 5}, kFloat64);
  linear(x, w, b).backward(g);
  Tensor g2 = g.reshape({6, 5});
  Tensor want_x = naive_mm(g2, w.detach()).reshape({2, 3, 4});
  Tensor want_w = naive_mm(g2.t(), x.detach().reshape({6, 4}));
  EXPECT_TRUE(all_close(x.grad(), want_x, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(w.grad(), want_w, 1e-12, 1e-12));
  EXPECT_TRUE(all_close(b.grad(), g2.sum({0}), 1e-12, 1e-12));
}

TEST_F(LinalgTest, SavesOnlyWhatTheNeededGradientsUse) {
  // Only `b` needs a gradient, so mm keeps `a` but not `b`: changing `b` in
  // place after the forward leaves backward intact.
  Tensor a = randn({2, 3}, kFloat64), b = randn({3, 2}, kF64Grad);
  Tensor out = mm(a, b);
  {
    NoGradGuard no_grad;
    b.mul_(2);
  }
  out.sum().backward();
  EXPECT_TRUE(all_close(b.grad(), a.t().sum({1}, true).expand({3, 2}), 1e-12, 1e-12));
  EXPECT_FALSE(a.grad().defined());
  // The tensor it did keep is checked.
  Tensor a2 = randn({2, 3}, kFloat64), b2 = randn({3, 2}, kF64Grad);
  Tensor out2 = mm(a2, b2);
  a2.mul_(2);
  EXPECT_TRUE(throws_with([&] { out2.sum().backward(); }, "MmBackward"));
}

}  // namespace
}  // namespace tandem
