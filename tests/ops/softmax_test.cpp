// softmax and log_softmax: values against PyTorch, any dim, stability,
// strided inputs, gradients and errors.
#include <cmath>
#include <limits>
#include <vector>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using autograd::gradcheck;
using autograd::tensor_list;
using testing::all_close;
using testing::throws_with;

// A new tensor holding `values` with `sizes` (no shape ops needed).
using testing::from_values;

// softmax over `dim` of a contiguous float64 tensor, the obvious way.
Tensor naive_softmax(const Tensor& x, int64_t dim, bool log) {
  Tensor out = x.clone();
  const double* in = x.data_ptr<double>();
  double* o = out.data_ptr<double>();
  int64_t n = x.sizes()[dim], inner = 1, outer = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < dim) outer *= x.sizes()[d];
    if (d > dim) inner *= x.sizes()[d];
  }
  for (int64_t a = 0; a < outer; ++a) {
    for (int64_t b = 0; b < inner; ++b) {
      const int64_t base = a * n * inner + b;
      double total = 0;
      for (int64_t j = 0; j < n; ++j) total += std::exp(in[base + j * inner]);
      for (int64_t j = 0; j < n; ++j) {
        double v = in[base + j * inner];
        o[base + j * inner] = log ? v - std::log(total) : std::exp(v) / total;
      }
    }
  }
  return out;
}

const std::vector<double> kX = {
    0.5, -1.0, 2.0, 0.25, 1.5, 0.0, -0.5, 3.0, -2.0, 1.0, 0.75, -0.25};

TEST(Softmax, MatchesPyTorch) {
  Tensor x = from_values(kX, {3, 4});
  // torch.softmax(x, 1) and torch.log_softmax(x, 0)
  Tensor softmax1 = from_values({0.1542348252841622,
                                 0.034414441266120206,
                                 0.6912325307415308,
                                 0.12011820270818684,
                                 0.17122834638196904,
                                 0.038206208350159566,
                                 0.023173236755740605,
                                 0.767392208512131,
                                 0.0235389539119683,
                                 0.4727925279320521,
                                 0.36821119098379124,
                                 0.13545732717218834},
                                {3, 4});
  Tensor log_softmax0 = from_values({-1.3350975955161672,
                                     -2.4076059644443806,
                                     -0.31378086333725796,
                                     -2.847763594119204,
                                     -0.3350975955161672,
                                     -1.4076059644443804,
                                     -2.813780863337258,
                                     -0.09776359411920418,
                                     -3.8350975955161672,
                                     -0.4076059644443804,
                                     -1.563780863337258,
                                     -3.347763594119204},
                                    {3, 4});
  EXPECT_TRUE(all_close(softmax(x, 1), softmax1, 1e-12, 0));
  EXPECT_TRUE(all_close(x.softmax(-1), softmax1, 1e-12, 0));
  EXPECT_TRUE(all_close(log_softmax(x, 0), log_softmax0, 1e-12, 0));
  EXPECT_TRUE(all_close(x.log_softmax(-2), log_softmax0, 1e-12, 0));
}

TEST(Softmax, EveryDimOfA3dTensor) {
  std::vector<double> values(2 * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(1.7 * i) * 3;
  Tensor x = from_values(values, {2, 3, 4});
  for (int64_t dim = 0; dim < 3; ++dim) {
    for (bool log : {false, true}) {
      Tensor got = log ? log_softmax(x, dim) : softmax(x, dim);
      EXPECT_TRUE(all_close(got, naive_softmax(x, dim, log), 1e-12, 1e-14))
          << "dim " << dim << (log ? " log_softmax" : " softmax");
    }
  }
  EXPECT_TRUE(all_close(softmax(x, -2), softmax(x, 1), 0, 0));
}

TEST(Softmax, Float32RowsSumToOne) {
  std::vector<double> values(3 * 10000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(0.37 * i) * 20;
  Tensor x = from_values(values, {3, 10000}, kFloat32);
  Tensor y = softmax(x, 1);
  ASSERT_EQ(y.dtype(), kFloat32);
  const float* p = y.data_ptr<float>();
  for (int r = 0; r < 3; ++r) {
    double total = 0;
    for (int j = 0; j < 10000; ++j) total += p[r * 10000 + j];
    EXPECT_NEAR(total, 1.0, 1e-5);
  }
  EXPECT_TRUE(all_close(y, naive_softmax(x.to(kFloat64), 1, false), 1e-5, 1e-9));
  EXPECT_TRUE(
      all_close(log_softmax(x, 1), naive_softmax(x.to(kFloat64), 1, true), 1e-5, 1e-5));
}

TEST(Softmax, StableForLargeAndInfiniteInputs) {
  Tensor big = from_values({1000, 1001, 1002}, {1, 3});
  Tensor small = from_values({0, 1, 2}, {1, 3});
  EXPECT_TRUE(all_close(softmax(big, 1), softmax(small, 1), 1e-12, 0));
  EXPECT_TRUE(all_close(log_softmax(big, 1), log_softmax(small, 1), 1e-12, 0));
  Tensor spread = from_values({-1000, 0}, {2});
  EXPECT_TRUE(
      all_close(log_softmax(spread, 0), from_values({-1000, 0}, {2}), 1e-12, 1e-12));
  const double inf = std::numeric_limits<double>::infinity();
  Tensor masked = from_values({-inf, 0, -inf}, {3});
  EXPECT_TRUE(all_close(softmax(masked, 0), from_values({0, 1, 0}, {3}), 0, 0));
}

TEST(Softmax, ScalarAndEmpty) {
  Tensor s = scalar_tensor(3.0, kFloat64);
  EXPECT_EQ(softmax(s, 0).item<double>(), 1.0);
  EXPECT_EQ(log_softmax(s, -1).item<double>(), 0.0);
  EXPECT_EQ(softmax(zeros({0, 4}), 1).sizes(), (IntList{0, 4}));
}

TEST(Softmax, StridedInput) {
  // The transpose of a [4, 3] row-major buffer, viewed without a copy.
  std::vector<double> buffer(kX);
  Tensor xt = from_blob(buffer.data(), {3, 4}, {1, 3}, kFloat64);
  ASSERT_FALSE(xt.is_contiguous());
  Tensor dense = xt.clone();
  EXPECT_TRUE(all_close(softmax(xt, 1), softmax(dense, 1), 1e-15, 0));
  EXPECT_TRUE(all_close(log_softmax(xt, 0), log_softmax(dense, 0), 1e-15, 0));
}

TEST(Softmax, Gradcheck) {
  std::vector<double> values(2 * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(0.9 * i);
  Tensor x = from_values(values, {2, 3, 4}).requires_grad_();
  for (int64_t dim : {0, 1, 2, -1}) {
    EXPECT_TRUE(
        gradcheck([dim](const tensor_list& in) { return softmax(in[0], dim); }, {x}))
        << "softmax dim " << dim;
    EXPECT_TRUE(
        gradcheck([dim](const tensor_list& in) { return log_softmax(in[0], dim); }, {x}))
        << "log_softmax dim " << dim;
  }
  Tensor row = from_values({0.3, -0.2, 1.1}, {3}).requires_grad_();
  EXPECT_TRUE(
      gradcheck([](const tensor_list& in) { return log_softmax(in[0], 0); }, {row}));
}

TEST(Softmax, GradientOfLogSoftmaxMatchesFormula) {
  Tensor x = from_values(kX, {3, 4}).requires_grad_();
  Tensor y = log_softmax(x, 1);
  Tensor g = from_values({1, 0, 0, 2, 0, -1, 0, 0, 0.5, 0.5, 0.5, 0.5}, {3, 4});
  y.backward(g);
  // g - softmax(x) * sum(g) per row; row sums of g are 3, -1 and 2.
  Tensor p = softmax(x.detach(), 1);
  const double* pp = p.data_ptr<double>();
  const double* pg = g.data_ptr<double>();
  const double row_sums[] = {3, -1, 2};
  std::vector<double> want(12);
  for (int i = 0; i < 12; ++i) want[i] = pg[i] - pp[i] * row_sums[i / 4];
  EXPECT_TRUE(all_close(x.grad(), from_values(want, {3, 4}), 1e-12, 1e-15));
}

TEST(Softmax, Errors) {
  Tensor ints = tensor<int64_t>({1, 2, 3});
  EXPECT_TRUE(
      throws_with([&] { softmax(ints, 0); },
                  "softmax: expected 'input' to be float32 or float64, got int64"));
  EXPECT_TRUE(
      throws_with([&] { log_softmax(ints, 0); }, "log_softmax: expected 'input'"));
  EXPECT_TRUE(throws_with([] { softmax(zeros({2, 3}), 2); }, "softmax"));
  EXPECT_TRUE(throws_with([] { log_softmax(zeros({2, 3}), -3); }, "log_softmax"));
  EXPECT_TRUE(throws_with([] { softmax(Tensor(), 0); }, "softmax: argument 'input'"));
}

}  // namespace
}  // namespace tandem
