// dropout: the kept fraction, the scaling, reproducibility, the gradient and
// the edge cases p = 0, p = 1 and eval mode.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

// The fraction of non-zero elements of a float32 tensor.
double kept_fraction(const Tensor& y) {
  const float* p = y.data_ptr<float>();
  int64_t kept = 0;
  for (int64_t i = 0; i < y.numel(); ++i) kept += p[i] != 0;
  return static_cast<double>(kept) / static_cast<double>(y.numel());
}

TEST(Dropout, KeepsAboutOneMinusPAndScalesTheRest) {
  manual_seed(3);
  Tensor x = full({200000}, 2.0);
  for (double p : {0.1, 0.5, 0.8}) {
    Tensor y = dropout(x, p, /*train=*/true);
    // 200k Bernoulli draws: the standard error is at most 0.0012.
    EXPECT_NEAR(kept_fraction(y), 1 - p, 0.006) << "p = " << p;
    const float* py = y.data_ptr<float>();
    const float scaled = static_cast<float>(2.0 / (1 - p));
    for (int64_t i = 0; i < y.numel(); ++i) {
      ASSERT_TRUE(py[i] == 0 || py[i] == scaled) << "element " << i << " is " << py[i];
    }
  }
}

TEST(Dropout, ReproducibleWithManualSeed) {
  Tensor x = randn({1000});
  manual_seed(11);
  Tensor a = dropout(x, 0.5, true);
  manual_seed(11);
  Tensor b = dropout(x, 0.5, true);
  Tensor c = dropout(x, 0.5, true);
  EXPECT_TRUE(equal(a, b));
  EXPECT_FALSE(equal(b, c));
}

TEST(Dropout, GradientIsTheScaledMask) {
  manual_seed(5);
  Tensor x = ones({4000}, kFloat64).requires_grad_();
  Tensor y = dropout(x, 0.25, true);
  y.backward(ones_like(y));
  // With x = 1 the output is the mask / (1 - p) itself.
  EXPECT_TRUE(all_close(x.grad(), y.detach(), 0, 0));
  const double* g = x.grad().data_ptr<double>();
  int64_t zeros_seen = 0;
  for (int64_t i = 0; i < 4000; ++i) {
    ASSERT_TRUE(g[i] == 0 || g[i] == 1 / 0.75) << "element " << i << " is " << g[i];
    zeros_seen += g[i] == 0;
  }
  EXPECT_GT(zeros_seen, 0);
}

TEST(Dropout, EvalModeAndZeroPReturnTheInput) {
  Tensor x = randn({10}).requires_grad_();
  EXPECT_TRUE(dropout(x, 0.5, /*train=*/false).is_same(x));
  EXPECT_TRUE(dropout(x, 0.0, /*train=*/true).is_same(x));
}

TEST(Dropout, PEqualOneGivesZerosWithAGradient) {
  Tensor x = randn({10}, kFloat64).requires_grad_();
  Tensor y = dropout(x, 1.0, true);
  EXPECT_TRUE(all_close(y, zeros({10}, kFloat64), 0, 0));
  y.backward(ones_like(y));
  EXPECT_TRUE(all_close(x.grad(), zeros({10}, kFloat64), 0, 0));
}

TEST(Dropout, Errors) {
  EXPECT_TRUE(throws_with([] { dropout(ones({3}), 1.5, true); },
                          "dropout: expected probability p in [0, 1], got 1.5"));
  EXPECT_TRUE(throws_with([] { dropout(ones({3}), -0.1, false); },
                          "dropout: expected probability p in [0, 1], got -0.1"));
  EXPECT_TRUE(
      throws_with([] { dropout(ones({3}, kInt64), 0.5, true); },
                  "dropout: expected 'input' to be float32 or float64, got int64"));
}

}  // namespace
}  // namespace tandem
