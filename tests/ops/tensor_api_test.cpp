// The Tensor methods and free functions LibTorch programs call daily that
// tandem gained for issue 22: norm, all/any, var/std, logsumexp,
// masked_fill, addcmul/addcdiv, in-place math and comparisons, repeat,
// unbind, dot/mv, linspace, eye and the one-integer sizes. Values are
// PyTorch 1.13's where they are not obvious; every differentiable one is
// gradchecked in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::gradgradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::from_values;
using testing::throws_with;

const TensorOptions kF64Grad = TensorOptions(kF64).requires_grad(true);

Tensor sample() { return from_values({1.5, -2.0, 0.5, 3.0, 0.25, -1.0}, {2, 3}, kF64); }

TEST(TensorApi, NormMatchesPyTorch) {
  Tensor x = sample();
  EXPECT_DOUBLE_EQ(x.norm().item<double>(), 4.0697051490249265);
  EXPECT_TRUE(
      all_close(x.norm(2, 1), from_values({2.5495097567963922, 3.17214438511238}, {2})));
  EXPECT_TRUE(all_close(tandem::norm(x, 1, 0), from_values({4.5, 2.25, 1.5}, {3})));
  EXPECT_NEAR(x.norm(3).item<double>(), 3.4060913008575, 1e-12);
  EXPECT_TRUE(all_close(x.norm(INFINITY, 1), from_values({2.0, 3.0}, {2})));
  EXPECT_EQ(x.norm(0).item<double>(), 6.0);
  EXPECT_EQ(x.norm(2, {1}, /*keepdim=*/true).sizes(), IntList({2, 1}));
  EXPECT_TRUE(throws_with([&] { tandem::arange(3).norm(); }, "norm: expected 'self'"));
}

TEST(TensorApi, NormGradients) {
  for (double p : {1.0, 1.5, 2.0, 3.0, static_cast<double>(INFINITY)}) {
    Tensor x = tandem::randn({3, 4}, kF64Grad);
    EXPECT_TRUE(gradcheck([p](const tensor_list& in) { return in[0].norm(p, {1}); }, {x}))
        << "p = " << p;
  }
  Tensor x = tandem::randn({3, 4}, kF64Grad);
  EXPECT_TRUE(gradgradcheck([](const tensor_list& in) { return in[0].norm(2, 0); }, {x}));
  // PyTorch: a zero norm has a zero gradient, and max |x| ties share it.
  Tensor z = tandem::zeros({3}, kF64Grad);
  z.norm().backward();
  EXPECT_TRUE(all_close(z.grad(), tandem::zeros({3}, kF64), 0, 0));
  Tensor t = from_values({2.0, -2.0, 1.0}, {1, 3}).requires_grad_();
  t.norm(INFINITY).backward();
  EXPECT_TRUE(all_close(t.grad(), from_values({0.5, -0.5, 0.0}, {1, 3}), 0, 0));
}

TEST(TensorApi, AllAndAny) {
  Tensor m = tandem::tensor<int64_t>({1, 0, 2, 3, 4, 5}).view({2, 3});
  EXPECT_FALSE(m.all().item<bool>());
  EXPECT_TRUE(m.any().item<bool>());
  EXPECT_EQ(m.all().dtype(), kBool);
  EXPECT_TRUE(tandem::equal(m.all(1), tandem::tensor({false, true})));
  EXPECT_TRUE(tandem::equal(m.any(0, /*keepdim=*/true),
                            tandem::tensor({true, true, true}).view({1, 3})));
  EXPECT_TRUE(tandem::all(tandem::full({2}, NAN)).item<bool>());  // NaN is non-zero
  EXPECT_TRUE(tandem::zeros({0}).all().item<bool>());
  EXPECT_FALSE(tandem::zeros({0}).any().item<bool>());
  EXPECT_EQ(tandem::ones({2}, kU8).all().dtype(), kU8);
}

TEST(TensorApi, VarAndStdMatchPyTorch) {
  Tensor x = sample();
  EXPECT_NEAR(x.var().item<double>(), 3.14375, 1e-12);
  EXPECT_TRUE(all_close(x.var({1}, /*unbiased=*/false, /*keepdim=*/true),
                        from_values({2.1666666666666665, 2.7916666666666665}, {2, 1})));
  EXPECT_TRUE(all_close(
      x.std(0, true),
      from_values({1.0606601717798212, 1.590990257669732, 1.0606601717798212}, {3})));
  EXPECT_NEAR(tandem::std(x, false).item<double>(), std::sqrt(3.14375 * 5 / 6), 1e-12);
  EXPECT_NEAR(x.var(false).item<double>(), 3.14375 * 5 / 6, 1e-12);
}

TEST(TensorApi, VarAndStdGradients) {
  Tensor x = tandem::randn({4, 5}, kF64Grad);
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].var({0}); }, {x}));
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].std(1, false); }, {x}));
  EXPECT_TRUE(gradgradcheck([](const tensor_list& in) { return in[0].std(); }, {x}));
  Tensor c = tandem::full({4}, 2.0, kF64Grad);  // no spread: PyTorch gives 0, not NaN
  c.std().backward();
  EXPECT_TRUE(all_close(c.grad(), tandem::zeros({4}, kF64), 0, 0));
}

TEST(TensorApi, LogsumexpMatchesPyTorchAndKeepsInfinities) {
  Tensor x = sample();
  EXPECT_TRUE(all_close(x.logsumexp(1),
                        from_values({1.8350975955161672, 3.0790362014040995}, {2})));
  EXPECT_NEAR(tandem::logsumexp(x, {0, 1}).item<double>(), 3.332318339600734, 1e-12);
  Tensor big = tandem::full({3}, 1000.0, kF64);
  EXPECT_NEAR(big.logsumexp(0).item<double>(), 1000 + std::log(3.0), 1e-9);
  EXPECT_EQ(tandem::full({2}, -INFINITY).logsumexp(0).item<double>(), -INFINITY);
  Tensor g = tandem::randn({3, 4}, kF64Grad);
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].logsumexp(1); }, {g}));
}

TEST(TensorApi, MaskedFillAddcmulAddcdiv) {
  Tensor x = tandem::arange(4, kF64).view({2, 2});
  Tensor mask = tandem::tensor({true, false}).view({2, 1});
  EXPECT_TRUE(all_close(x.masked_fill(mask, -1), from_values({-1, -1, 2, 3}, {2, 2})));
  Tensor y = x.clone();
  y.masked_fill_(x > 1.5, tandem::tensor(7.0));
  EXPECT_TRUE(all_close(y, from_values({0, 1, 7, 7}, {2, 2})));
  EXPECT_TRUE(
      throws_with([&] { x.masked_fill(x, 1); }, "masked_fill: expected a bool mask"));
  EXPECT_TRUE(throws_with(
      [&] {
        y.masked_fill_(tandem::ones({3, 2, 2}, kBool), 1);
      },
      "does not broadcast"));
  Tensor a = tandem::randn({2, 2}, kF64Grad), b = tandem::randn({2, 2}, kF64Grad);
  Tensor v = tandem::tensor(3.0, kF64Grad);
  EXPECT_TRUE(gradcheck(
      [&](const tensor_list& in) { return in[0].masked_fill(mask, in[1]); }, {a, v}));
  EXPECT_TRUE(all_close(x.addcmul(x, x, 0.5), x + 0.5 * x * x));
  EXPECT_TRUE(all_close(x.addcdiv(x, x + 1, -2), x - 2 * x / (x + 1)));
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) { return in[0].addcdiv(in[0], in[1] * in[1] + 1, 0.3); },
      {a, b}));
  Tensor z = x.clone();
  z.addcmul_(x, x, 2).addcdiv_(x, x + 1);
  EXPECT_TRUE(all_close(z, x + 2 * x * x + x / (x + 1)));
  EXPECT_TRUE(throws_with([&] { x.addcdiv(tandem::arange(2), tandem::arange(2)); },
                          "integer division"));
}

TEST(TensorApi, InPlaceMathMatchesOutOfPlace) {
  Tensor x = tandem::rand({5}, kF64) + 0.5;
  EXPECT_TRUE(tandem::equal(x.clone().exp_(), x.exp()));
  EXPECT_TRUE(tandem::equal(x.clone().log_(), x.log()));
  EXPECT_TRUE(tandem::equal(x.clone().sqrt_(), x.sqrt()));
  EXPECT_TRUE(tandem::equal(x.clone().neg_(), -x));
  EXPECT_TRUE(tandem::equal((-x).abs_(), x));
  EXPECT_TRUE(tandem::equal(x.clone().sigmoid_(), x.sigmoid()));
  EXPECT_TRUE(tandem::equal(x.clone().tanh_(), x.tanh()));
  EXPECT_TRUE(tandem::equal(x.clone().pow_(3), x.pow(3)));
  Tensor i = tandem::arange(3);
  EXPECT_TRUE(throws_with([&] { i.exp_(); }, "exp_: the result type float32"));
  // With autograd: the gradient flows through the in-place op.
  Tensor w = tandem::randn({4}, kF64Grad);
  EXPECT_TRUE(gradcheck(
      [](const tensor_list& in) {
        Tensor h = in[0] * 1;
        h.exp_().sqrt_().tanh_();
        return h;
      },
      {w}));
}

TEST(TensorApi, ComparisonsInPlace) {
  Tensor x = from_values({1, 2, 3, 4}, {4});
  EXPECT_TRUE(tandem::equal(x.clone().gt_(2), from_values({0, 0, 1, 1}, {4})));
  EXPECT_TRUE(tandem::equal(x.clone().eq_(from_values({1, 0, 3, 0}, {4})),
                            from_values({1, 0, 1, 0}, {4})));
  Tensor n = tandem::arange(4);
  n.le_(1);
  EXPECT_EQ(n.dtype(), kI64);
  EXPECT_TRUE(tandem::equal(n, tandem::tensor<int64_t>({1, 1, 0, 0})));
  EXPECT_TRUE(throws_with(
      [&] {
        tandem::zeros({2}).lt_(tandem::zeros({3, 2}));
      },
      "does not fit in place"));
}

TEST(TensorApi, RepeatUnbindDotMv) {
  Tensor x = tandem::arange(6, kF64).view({2, 3});
  Tensor r = x.repeat({2, 1, 2});
  EXPECT_EQ(r.sizes(), IntList({2, 2, 6}));
  EXPECT_TRUE(tandem::equal(r[1], tandem::cat({x, x}, 1)));
  Tensor g = tandem::randn({2, 3}, kF64Grad);
  EXPECT_TRUE(gradcheck([](const tensor_list& in) { return in[0].repeat({3, 2}); }, {g}));
  EXPECT_TRUE(throws_with([&] { x.repeat({2}); }, "at least as many repeats as dims"));

  std::vector<Tensor> columns = x.unbind(1);
  ASSERT_EQ(columns.size(), 3u);
  EXPECT_TRUE(tandem::equal(columns[2], from_values({2, 5}, {2})));
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return in[0].unbind(0)[1] * 2; }, {g}));

  Tensor v = from_values({1, 2, 3}, {3});
  EXPECT_EQ(v.dot(v).item<double>(), 14);
  EXPECT_TRUE(tandem::equal(x.mv(v), from_values({8, 26}, {2})));
  EXPECT_TRUE(throws_with([&] { x.dot(v); }, "dot: expected two 1-D tensors"));
  EXPECT_TRUE(throws_with([&] { v.mv(v); }, "mv: expected a 2-D matrix"));
  EXPECT_TRUE(tandem::equal(tandem::max(x, 2 - x), tandem::maximum(x, 2 - x)));
  EXPECT_TRUE(tandem::equal(x.min(2 - x), tandem::minimum(x, 2 - x)));
}

TEST(TensorApi, LinspaceMatchesPyTorchBitwise) {
  auto values = [](const Tensor& t) {
    Tensor d = t.to(kF64);
    return std::vector<double>(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
  };
  EXPECT_EQ(values(tandem::linspace(0, 1, 5)),
            (std::vector<double>{0, 0.25, 0.5, 0.75, 1}));
  EXPECT_EQ(values(tandem::linspace(-1.3, 2.9, 7)),
            (std::vector<double>{-1.2999999523162842,
                                 -0.5999999642372131,
                                 0.10000002384185791,
                                 0.8000001311302185,
                                 1.5000001192092896,
                                 2.200000047683716,
                                 2.9000000953674316}));
  EXPECT_EQ(tandem::linspace(-1.3, 2.9, 7).dtype(), kF32);
  EXPECT_EQ(values(tandem::linspace(0, 10, 6, kI64)),
            (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(values(tandem::linspace(0.1, 0.7, 4, kF64)),
            (std::vector<double>{0.1, 0.3, 0.5, 0.7}));
  EXPECT_EQ(tandem::linspace(2, 3, 1).item<float>(), 2.0f);
  EXPECT_EQ(tandem::linspace(2, 3, 0).numel(), 0);
}

TEST(TensorApi, EyeAndOneIntegerSizes) {
  EXPECT_TRUE(tandem::equal(tandem::eye(2, 3, kI64),
                            tandem::tensor<int64_t>({1, 0, 0, 0, 1, 0}).view({2, 3})));
  EXPECT_TRUE(tandem::equal(tandem::eye(3).sum(), tandem::tensor(3.0f)));
  EXPECT_EQ(tandem::randn(3, kF64).sizes(), IntList({3}));
  EXPECT_EQ(tandem::zeros(int64_t{4}, Device("cpu:1")).device(), Device("cpu:1"));
  EXPECT_EQ(tandem::zeros({}).dim(), 0);  // a braced list still means sizes
  EXPECT_EQ(tandem::ones({5}).sizes(), IntList({5}));
  EXPECT_EQ(tandem::full(2, 1.5).sum().item<double>(), 3.0);
  EXPECT_EQ(tandem::arange(6).view(-1).sizes(), IntList({6}));
  EXPECT_EQ(tandem::arange(6).view({2, 3}).reshape(-1).sizes(), IntList({6}));
  Tensor s = tandem::tensor(2.5, kF64);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.item<double>(), 2.5);
  EXPECT_EQ(tandem::tensor(3).dtype(), kI64);
  EXPECT_EQ(tandem::tensor({3}).sizes(), IntList({1}));
  EXPECT_EQ(tandem::tensor({1, 2, 3}, kF32).dtype(), kF32);
}

}  // namespace
}  // namespace tandem
