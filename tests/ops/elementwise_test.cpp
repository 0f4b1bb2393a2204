// Elementwise ops: values against std:: math, broadcasting, dtype promotion,
// comparisons, clamp/maximum/minimum/pow/where details, gradients at their
// special points, and in-place variants. Every op's gradcheck (broadcasting
// included) is a row of tests/consistency/op_cases_test.cpp.
#include <cmath>
#include <limits>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> values(const Tensor& t) {
  Tensor c = t.to(Device(kCPU), kFloat64).contiguous();
  const double* p = c.data_ptr<double>();
  return std::vector<double>(p, p + c.numel());
}

Tensor f64(std::initializer_list<double> v) { return tensor(v); }

TensorOptions f64_grad() { return TensorOptions(kFloat64).requires_grad(true); }

// ---- values ----

TEST(Elementwise, UnaryMathMatchesStd) {
  const std::vector<double> in = {0.25, 1.0, 2.5, 7.0};
  Tensor x = tensor(in);
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> op;
    double (*ref)(double);
  };
  std::vector<Case> cases = {
      {"exp",
       [](const Tensor& t) { return exp(t); },
       [](double v) { return std::exp(v); }},
      {"log",
       [](const Tensor& t) { return log(t); },
       [](double v) { return std::log(v); }},
      {"sqrt",
       [](const Tensor& t) { return sqrt(t); },
       [](double v) { return std::sqrt(v); }},
      {"rsqrt",
       [](const Tensor& t) { return rsqrt(t); },
       [](double v) { return 1 / std::sqrt(v); }},
      {"neg", [](const Tensor& t) { return neg(t); }, [](double v) { return -v; }},
      {"square",
       [](const Tensor& t) { return square(t); },
       [](double v) { return v * v; }},
      {"reciprocal",
       [](const Tensor& t) { return reciprocal(t); },
       [](double v) { return 1 / v; }},
      {"sigmoid",
       [](const Tensor& t) { return sigmoid(t); },
       [](double v) { return 1 / (1 + std::exp(-v)); }},
      {"tanh",
       [](const Tensor& t) { return tanh(t); },
       [](double v) { return std::tanh(v); }},
  };
  for (const Case& c : cases) {
    std::vector<double> want;
    for (double v : in) want.push_back(c.ref(v));
    Tensor got = c.op(x);
    EXPECT_EQ(got.dtype(), kFloat64) << c.name;
    EXPECT_TRUE(all_close(got, tensor(want), 1e-14, 0)) << c.name;
    EXPECT_TRUE(all_close(c.op(x.to(kFloat32)), tensor(want), 1e-6, 0)) << c.name;
  }
  EXPECT_EQ(values(abs(f64({-2, 0, 3}))), (std::vector<double>{2, 0, 3}));
  EXPECT_EQ(values(sign(f64({-2, 0, 3}))), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(values(abs(tensor({-4, 5}))), (std::vector<double>{4, 5}));
  EXPECT_EQ(abs(tensor({-4, 5})).dtype(), kInt64);
}

TEST(Elementwise, IntegerInputsToFloatingMathGiveFloat32) {
  Tensor e = exp(tensor({0, 1}));
  EXPECT_EQ(e.dtype(), kFloat32);
  EXPECT_TRUE(all_close(e, f64({1, std::exp(1.0)}), 1e-6));
  EXPECT_EQ(sqrt(tensor({4})).dtype(), kFloat32);
  EXPECT_TRUE(throws_with([] { neg(tensor({true})); }, "bool"));
}

TEST(Elementwise, ArithmeticValues) {
  Tensor a = f64({1, 2, 3}), b = f64({4, -5, 0.5});
  EXPECT_EQ(values(a + b), (std::vector<double>{5, -3, 3.5}));
  EXPECT_EQ(values(add(a, b, 2)), (std::vector<double>{9, -8, 4}));
  EXPECT_EQ(values(a - b), (std::vector<double>{-3, 7, 2.5}));
  EXPECT_EQ(values(sub(a, b, 2)), (std::vector<double>{-7, 12, 2}));
  EXPECT_EQ(values(a * b), (std::vector<double>{4, -10, 1.5}));
  EXPECT_EQ(values(a / b), (std::vector<double>{0.25, -0.4, 6}));
  EXPECT_EQ(values(a + 1), (std::vector<double>{2, 3, 4}));
  EXPECT_EQ(values(add(a, 1, 3)), (std::vector<double>{4, 5, 6}));
  EXPECT_EQ(values(sub(a, 1, 3)), (std::vector<double>{-2, -1, 0}));
  EXPECT_EQ(values(10 - a), (std::vector<double>{9, 8, 7}));
  EXPECT_EQ(values(a * 2), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(values(2 * a), (std::vector<double>{2, 4, 6}));
  EXPECT_EQ(values(6 / a), (std::vector<double>{6, 3, 2}));
  EXPECT_EQ(values(-a), (std::vector<double>{-1, -2, -3}));
  EXPECT_EQ(values(pow(a, 2)), (std::vector<double>{1, 4, 9}));
  EXPECT_EQ(values(pow(a, b)),
            (std::vector<double>{1, std::pow(2.0, -5.0), std::pow(3.0, 0.5)}));
  EXPECT_EQ(values(pow(2, a)), (std::vector<double>{2, 4, 8}));
  EXPECT_EQ(values(maximum(a, b)), (std::vector<double>{4, 2, 3}));
  EXPECT_EQ(values(minimum(a, b)), (std::vector<double>{1, -5, 0.5}));
}

TEST(Elementwise, DivisionByAScalarIsTrueDivision) {
  // x / 49 must equal the correctly rounded quotient, not x * (1 / 49).
  for (double d : {49.0, 3.0, 10.0, 7.0}) {
    std::vector<double> in = {1, 49, 98, 0.3, 1e10};
    std::vector<double> want;
    for (double v : in) want.push_back(v / d);
    EXPECT_EQ(values(tensor(in) / d), want) << d;
    std::vector<float> inf(in.begin(), in.end());
    Tensor got = tensor(inf) / d;
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_EQ(got.data_ptr<float>()[i], inf[i] / static_cast<float>(d)) << d;
    }
  }
}

TEST(Elementwise, IntegerDivisionGivesFloat) {
  Tensor q = tensor({7, -7}) / tensor({2, 2});
  EXPECT_EQ(q.dtype(), kFloat32);
  EXPECT_EQ(values(q), (std::vector<double>{3.5, -3.5}));
  Tensor s = tensor({7}) / 2;
  EXPECT_EQ(s.dtype(), kFloat32);
  EXPECT_EQ(s.item<double>(), 3.5);
  EXPECT_EQ((tensor({1}) / 0).item<double>(), INFINITY);
}

// ---- broadcasting ----

TEST(Elementwise, BroadcastsColumnWithRow) {
  Tensor col = tensor({1.0, 2.0, 3.0}).reshape({3, 1});
  Tensor row = tensor({10.0, 20.0, 30.0, 40.0}).reshape({1, 4});
  Tensor s = col + row;
  EXPECT_EQ(s.sizes(), (IntList{3, 4}));
  EXPECT_EQ(values(s),
            (std::vector<double>{11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43}));
  EXPECT_EQ((row * col).sizes(), (IntList{3, 4}));
  EXPECT_EQ(values(maximum(col, row * 0 + 2)),
            (std::vector<double>{2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3}));
}

TEST(Elementwise, BroadcastsZeroDimAndMissingDims) {
  Tensor m = ones({2, 3}, kFloat64);
  Tensor s = scalar_tensor(5, kFloat64);
  Tensor r = m * s;
  EXPECT_EQ(r.sizes(), (IntList{2, 3}));
  EXPECT_EQ(values(r), std::vector<double>(6, 5));
  EXPECT_EQ((s + s).dim(), 0);
  EXPECT_EQ((m + f64({1, 2, 3})).sizes(), (IntList{2, 3}));
  EXPECT_EQ((zeros({4, 1, 3}) + zeros({2, 1})).sizes(), (IntList{4, 2, 3}));
  EXPECT_EQ((zeros({0, 3}) + zeros({1, 3})).sizes(), (IntList{0, 3}));
}

TEST(Elementwise, BroadcastErrorNamesBothShapes) {
  EXPECT_TRUE(throws_with(
      [] {
        ones({2, 3}) + ones({4});
      },
      "add: shapes [2, 3] and [4] cannot be broadcast"));
  EXPECT_TRUE(throws_with(
      [] {
        ones({2, 3}) * ones({3, 2});
      },
      "mul: shapes [2, 3] and [3, 2]"));
  EXPECT_TRUE(throws_with([] { where(ones({2}) > 0, ones({3}), ones({2})); },
                          "where: shapes [2] and [3]"));
}

// ---- dtype promotion ----

TEST(Elementwise, DtypePromotion) {
  Tensor i = tensor({1, 2});
  Tensor f = tensor({0.5f, 1.5f});
  Tensor d = tensor({0.25, 0.75});
  EXPECT_EQ((i + f).dtype(), kFloat32);
  EXPECT_EQ(values(i + f), (std::vector<double>{1.5, 3.5}));
  EXPECT_EQ((f + d).dtype(), kFloat64);
  EXPECT_EQ((i + 0.5).dtype(), kFloat32);
  EXPECT_EQ(values(i + 0.5), (std::vector<double>{1.5, 2.5}));
  EXPECT_EQ((i * 2).dtype(), kInt64);
  EXPECT_EQ((i + 1.0).dtype(), kInt64);  // a whole-number scalar keeps int64
  EXPECT_EQ((f * 2.5).dtype(), kFloat32);
  EXPECT_EQ((tensor(std::vector<uint8_t>{1}) + i).dtype(), kInt64);
  EXPECT_EQ(pow(i, 2).dtype(), kInt64);
  EXPECT_EQ(values(pow(i, 2)), (std::vector<double>{1, 4}));
  EXPECT_EQ(pow(2, i).dtype(), kInt64);
  EXPECT_EQ(pow(2.5, i).dtype(), kFloat32);
  EXPECT_EQ(where(tensor({true, false}), i, f).dtype(), kFloat32);
}

TEST(Elementwise, ZeroDimTensorsDoNotPromoteWithinACategory) {
  // PyTorch: a 0-dim operand only decides the dtype when it is of a higher
  // category (integral < floating) than the dimensioned one.
  Tensor f = ones({3});
  EXPECT_EQ((f + scalar_tensor(2, kFloat64)).dtype(), kFloat32);
  EXPECT_EQ((scalar_tensor(2, kFloat64) * f).dtype(), kFloat32);
  EXPECT_EQ((ones({3}, kInt64) + scalar_tensor(2, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ((ones({3}, kUInt8) + scalar_tensor(300, kInt64)).dtype(), kUInt8);
  EXPECT_EQ((scalar_tensor(1, kFloat32) + scalar_tensor(1, kFloat64)).dtype(), kFloat64);
}

TEST(Elementwise, BoolArithmetic) {
  Tensor a = tensor({true, false, false}), b = tensor({true, true, false});
  Tensor s = a + b;  // logical or, as in PyTorch
  EXPECT_EQ(s.dtype(), kBool);
  EXPECT_EQ(values(s), (std::vector<double>{1, 1, 0}));
  Tensor p = a * b;  // logical and
  EXPECT_EQ(p.dtype(), kBool);
  EXPECT_EQ(values(p), (std::vector<double>{1, 0, 0}));
  EXPECT_TRUE(throws_with([&] { a - b; }, "bool"));
  EXPECT_EQ((a / b).dtype(), kFloat32);
  EXPECT_EQ((a + 1).dtype(), kInt64);
  EXPECT_EQ(values(a + 1), (std::vector<double>{2, 1, 1}));
  EXPECT_EQ((a + 0.5).dtype(), kFloat32);
}

// ---- comparisons, where, clamp, extremes ----

TEST(Elementwise, ComparisonsGiveBool) {
  Tensor a = f64({1, 2, 3}), b = f64({3, 2, 1});
  auto check = [](const Tensor& t, std::vector<double> want) {
    EXPECT_EQ(t.dtype(), kBool);
    EXPECT_EQ(values(t), want);
    EXPECT_FALSE(t.requires_grad());
  };
  check(a == b, {0, 1, 0});
  check(a != b, {1, 0, 1});
  check(a < b, {1, 0, 0});
  check(a <= b, {1, 1, 0});
  check(a > b, {0, 0, 1});
  check(a >= b, {0, 1, 1});
  check(a > 1.5, {0, 1, 1});
  check(eq(tensor({1, 2}), 1.5), {0, 0});
  check(lt(tensor({1, 2}), 1.5), {1, 0});
  check(eq(tensor({0.1f}), 0.1), {1});
  check(tensor({true, false}) == 2, {0, 0});
  check(tensor({true, false}) == 1, {1, 0});
  check(tensor(std::vector<uint8_t>{44, 255}) == 300, {0, 0});  // no wrap-around
  check(tensor(std::vector<uint8_t>{44, 255}) < 300, {1, 1});
  check(tensor({1, 2}) == tensor({1.0f, 2.5f}), {1, 0});
  check(ones({2}, f64_grad()) > 0, {1, 1});
  check(f64({kNaN}) == f64({kNaN}), {0});
  EXPECT_TRUE(equal(a, f64({1, 2, 3})));
  EXPECT_FALSE(equal(a, b));
  EXPECT_FALSE(equal(a, f64({1, 2})));
  EXPECT_TRUE(allclose(a, a + 1e-9));
  EXPECT_FALSE(allclose(a, a + 1e-3));
  EXPECT_FALSE(allclose(f64({kNaN}), f64({kNaN})));
}

TEST(Elementwise, WhereSelectsAndBroadcasts) {
  Tensor cond = tensor({true, false, true});
  Tensor r = where(cond, f64({1, 2, 3}), scalar_tensor(-1, kFloat64));
  EXPECT_EQ(values(r), (std::vector<double>{1, -1, 3}));
  Tensor grid = where(tensor({true, false}).reshape({2, 1}), ones({1, 3}), zeros({1, 3}));
  EXPECT_EQ(grid.sizes(), (IntList{2, 3}));
  EXPECT_EQ(values(grid), (std::vector<double>{1, 1, 1, 0, 0, 0}));
  EXPECT_TRUE(
      throws_with([] { where(ones({2}), ones({2}), ones({2})); }, "bool condition"));
}

TEST(Elementwise, ClampKeepsNaNAndHonoursOneSidedBounds) {
  Tensor x = f64({kNaN, -3, 0.5, 9});
  std::vector<double> c = values(clamp(x, -1, 2));
  EXPECT_TRUE(std::isnan(c[0]));
  EXPECT_EQ((std::vector<double>(c.begin() + 1, c.end())),
            (std::vector<double>{-1, 0.5, 2}));
  EXPECT_EQ(values(clamp_min(x, 0)).back(), 9);
  EXPECT_EQ(values(clamp_min(x, 0))[1], 0);
  EXPECT_EQ(values(clamp_max(x, 0))[3], 0);
  EXPECT_EQ(values(clamp_max(x, 0))[1], -3);
  EXPECT_EQ(values(clamp(tensor({-5, 5}), -2, 3)), (std::vector<double>{-2, 3}));
  EXPECT_EQ(clamp(tensor({-5, 5}), -2, 3).dtype(), kInt64);
  Tensor promoted = clamp(tensor({1, 2, 3}), 0.5, 2.5);  // bounds promote, as in PyTorch
  EXPECT_EQ(promoted.dtype(), kFloat32);
  EXPECT_EQ(values(promoted), (std::vector<double>{1, 2, 2.5}));
  EXPECT_EQ(clamp(tensor({true, false}), 0, 1).dtype(), kInt64);
  EXPECT_TRUE(throws_with([] { tensor({1, 2}).clamp_(0.5, 1); }, "clamp_"));
  EXPECT_EQ(values(clamp(f64({0, 5}), 3, 1)), (std::vector<double>{1, 1})) << "min > max";
  EXPECT_TRUE(throws_with([&] { clamp(x, std::nullopt, std::nullopt); }, "at least one"));
}

TEST(Elementwise, MaximumMinimumPropagateNaN) {
  std::vector<double> m = values(maximum(f64({kNaN, 1}), f64({0, kNaN})));
  EXPECT_TRUE(std::isnan(m[0]) && std::isnan(m[1]));
  std::vector<double> n = values(minimum(f64({kNaN, 1}), f64({0, 2})));
  EXPECT_TRUE(std::isnan(n[0]));
  EXPECT_EQ(n[1], 1);
}

// ---- gradients ----

TEST(ElementwiseGrad, MaximumMinimumSplitTiesEvenly) {
  Tensor a = f64({1, 2, 3}).requires_grad_();
  Tensor b = f64({2, 2, 1}).requires_grad_();
  maximum(a, b).backward(ones({3}, kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{0, 0.5, 1}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{1, 0.5, 0}));
  a.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();
  minimum(a, b).backward(ones({3}, kFloat64));
  EXPECT_EQ(values(a.grad()), (std::vector<double>{1, 0.5, 0}));
  EXPECT_EQ(values(b.grad()), (std::vector<double>{0, 0.5, 1}));
}

TEST(ElementwiseGrad, PowWithATensorExponent) {
  Tensor b = f64({2, 3, 0, 0}).requires_grad_();
  Tensor e = f64({3, 0.5, 2, 0}).requires_grad_();
  pow(b, e).backward(ones({4}, kFloat64));
  // d/db = e b^(e-1); d/de = b^e log b, taken as 0 at b == 0; and 0^0's
  // base gradient is 0 (PyTorch masks exponent == 0).
  EXPECT_TRUE(all_close(b.grad(), f64({12, 0.5 / std::sqrt(3), 0, 0}), 1e-12));
  EXPECT_TRUE(all_close(
      e.grad(), f64({8 * std::log(2), std::sqrt(3) * std::log(3), 0, 0}), 1e-12));
}

TEST(ElementwiseGrad, ClampPassesGradientInsideTheBoundsOnly) {
  Tensor x = f64({-2, -1, 0, 1, 2}).requires_grad_();
  clamp(x, -1, 1).backward(ones({5}, kFloat64));
  EXPECT_EQ(values(x.grad()), (std::vector<double>{0, 1, 1, 1, 0}));
}

TEST(ElementwiseGrad, PromotedOperandsGetGradientsInTheirOwnDtype) {
  Tensor f = tensor({1.0f, 2.0f}, requires_grad());
  Tensor d = f64({3, 4}).requires_grad_();
  Tensor y = f * d;
  EXPECT_EQ(y.dtype(), kFloat64);
  y.backward(ones({2}, kFloat64));
  EXPECT_EQ(f.grad().dtype(), kFloat32);
  EXPECT_EQ(values(f.grad()), (std::vector<double>{3, 4}));
  EXPECT_EQ(values(d.grad()), (std::vector<double>{1, 2}));
}

// ---- in place ----

TEST(ElementwiseInPlace, VariantsComputeTheRightValues) {
  Tensor t = f64({1, 2, 3});
  t.add_(f64({1, 1, 1}), 2);
  EXPECT_EQ(values(t), (std::vector<double>{3, 4, 5}));
  t.sub_(f64({1, 2, 3}));
  EXPECT_EQ(values(t), (std::vector<double>{2, 2, 2}));
  t.sub_(f64({1, 1, 1}), 0.5);
  EXPECT_EQ(values(t), (std::vector<double>{1.5, 1.5, 1.5}));
  t.mul_(f64({2, 4, 6}));
  EXPECT_EQ(values(t), (std::vector<double>{3, 6, 9}));
  t.div_(f64({3, 3, 3}));
  EXPECT_EQ(values(t), (std::vector<double>{1, 2, 3}));
  t.add_(1).mul_(2).sub_(1).div_(2);
  EXPECT_EQ(values(t), (std::vector<double>{1.5, 2.5, 3.5}));
  t.clamp_(2, 3);
  EXPECT_EQ(values(t), (std::vector<double>{2, 2.5, 3}));
  t.clamp_(std::nullopt, 2.25);
  EXPECT_EQ(values(t), (std::vector<double>{2, 2.25, 2.25}));
  t -= 2.25;
  relu_(t);
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 0}));
  t += f64({1, -1, 2});
  t.relu_();
  EXPECT_EQ(values(t), (std::vector<double>{1, 0, 2}));
  t *= 3;
  t /= f64({3, 1, 2});
  EXPECT_EQ(values(t), (std::vector<double>{1, 0, 3}));
  t.fill_(7);
  EXPECT_EQ(values(t), (std::vector<double>{7, 7, 7}));
  t.zero_();
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 0}));
}

TEST(ElementwiseInPlace, BroadcastsTheOtherOperandAndRefusesToGrow) {
  Tensor m = zeros({2, 3}, kFloat64);
  m.add_(f64({1, 2, 3}));
  m.mul_(f64({1, 10}).reshape({2, 1}));
  EXPECT_EQ(values(m), (std::vector<double>{1, 2, 3, 10, 20, 30}));
  m.add_(scalar_tensor(1, kFloat64));
  EXPECT_EQ(values(m)[0], 2);
  EXPECT_TRUE(throws_with(
      [&] {
        m.add_(ones({4, 2, 3}));
      },
      "add_: the result of shape [4, 2, 3] does not fit"));
  EXPECT_TRUE(throws_with([] { zeros({3}).mul_(zeros({2, 3})); }, "[3]"));
}

TEST(ElementwiseInPlace, ResultTypeMustFitTheTensor) {
  Tensor i = tensor({1, 2});
  EXPECT_TRUE(throws_with([&] { i.add_(0.5); }, "float32 cannot be stored in place"));
  EXPECT_TRUE(throws_with([&] { i.add_(tensor({0.5f, 1.0f})); }, "int64"));
  EXPECT_TRUE(throws_with([&] { i.mul_(1.5); }, "mul_"));
  EXPECT_TRUE(throws_with([&] { i.div_(2); }, "div_"));
  EXPECT_TRUE(throws_with([&] { i.div_(tensor({2, 2})); }, "div_"));
  EXPECT_EQ(values(i), (std::vector<double>{1, 2})) << "nothing was written";
  i.add_(3);
  i.mul_(2.0);
  EXPECT_EQ(values(i), (std::vector<double>{8, 10}));
  // Within a category the result is cast back, as in PyTorch.
  Tensor f = ones({2});
  f.add_(f64({0.5, 0.25}));
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_EQ(values(f), (std::vector<double>{1.5, 1.25}));
  Tensor u = tensor(std::vector<uint8_t>{1, 2});
  u.add_(tensor({3, 4}));
  EXPECT_EQ(values(u), (std::vector<double>{4, 6}));
  EXPECT_TRUE(throws_with([] { zeros({2}, kBool).add_(ones({2}, kInt64)); }, "bool"));
}

}  // namespace
}  // namespace tandem
