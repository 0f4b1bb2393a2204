// nn::utils: gradient clipping by norm and by value, and parameters as one
// flat vector, padded sequences. clip_grad_norm_ against PyTorch is in
// tests/parity/clip_grad_test.cpp.
#include <cmath>
#include <limits>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace tandem {
namespace {

using testing::all_close;
using testing::throws_with;

TEST(ClipGradNorm, ScalesAllGradientsByOneFactor) {
  Tensor a = zeros({2}).requires_grad_();
  Tensor b = zeros({1}).requires_grad_();
  Tensor no_grad = zeros({3}).requires_grad_();
  a.set_grad(tensor({3.0f, 0.0f}));
  b.set_grad(tensor({4.0f}));
  const double total = nn::utils::clip_grad_norm_({a, b, no_grad}, 1.0);
  EXPECT_NEAR(total, 5.0, 1e-6);
  const float coef = 1.0f / (5.0f + 1e-6f);
  EXPECT_TRUE(all_close(a.grad(), tensor({3 * coef, 0.0f}), 1e-6, 1e-7));
  EXPECT_TRUE(all_close(b.grad(), tensor({4 * coef}), 1e-6, 1e-7));
  EXPECT_FALSE(no_grad.grad().defined());
}

TEST(ClipGradNorm, LeavesSmallGradientsAndTakesTheInfinityNorm) {
  Tensor a = zeros({3}, kFloat64).requires_grad_();
  a.set_grad(tensor({-0.5, 0.25, 0.1}, kFloat64));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_DOUBLE_EQ(nn::utils::clip_grad_norm_(a, 10.0, inf), 0.5);
  EXPECT_TRUE(equal(a.grad(), tensor({-0.5, 0.25, 0.1}, kFloat64)));
  EXPECT_EQ(nn::utils::clip_grad_norm_(std::vector<Tensor>{}, 1.0), 0.0);
}

TEST(ClipGradNorm, NonFiniteNormsThrowOnlyWhenAsked) {
  Tensor a = zeros({2}, kFloat64).requires_grad_();
  a.set_grad(tensor({std::nan(""), 1.0}, kFloat64));
  EXPECT_TRUE(throws_with(
      [&] { nn::utils::clip_grad_norm_(a, 1.0, 2.0, /*error_if_nonfinite=*/true); },
      "clip_grad_norm_: the total norm of order 2 for gradients from `parameters` is "
      "non-finite"));
  EXPECT_TRUE(std::isnan(a.grad()[0].item<double>()));
  EXPECT_EQ(a.grad()[1].item<double>(), 1.0);
  EXPECT_TRUE(std::isnan(nn::utils::clip_grad_norm_(a, 1.0)));
}

TEST(ClipGradValue, ClampsEveryElement) {
  Tensor a = zeros({4}).requires_grad_();
  a.set_grad(tensor({-3.0f, -0.5f, 0.5f, 2.0f}));
  nn::utils::clip_grad_value_({a}, 1.0);
  EXPECT_TRUE(equal(a.grad(), tensor({-1.0f, -0.5f, 0.5f, 1.0f})));
}

TEST(ParametersToVector, RoundTripsInPlace) {
  nn::Linear fc(3, 2);
  auto params = fc->parameters();
  Tensor flat = nn::utils::parameters_to_vector(params);
  ASSERT_EQ(flat.sizes(), (IntList{8}));
  EXPECT_TRUE(equal(flat.narrow(0, 0, 6).view({2, 3}), fc->weight));
  Tensor weight_before = fc->weight;
  nn::utils::vector_to_parameters(flat * 2, params);
  // The same tensors, now holding the new values.
  EXPECT_EQ(fc->weight.unsafe_impl(), weight_before.unsafe_impl());
  EXPECT_TRUE(equal(nn::utils::parameters_to_vector(params), flat * 2));
  EXPECT_TRUE(throws_with([&] { nn::utils::vector_to_parameters(zeros({7}), params); },
                          "vector_to_parameters: the vector has 7 elements but the "
                          "parameters have 8"));
  EXPECT_TRUE(throws_with(
      [&] {
        nn::utils::vector_to_parameters(zeros({2, 4}), params);
      },
      "vector_to_parameters: expected a 1-D vector, got shape [2, 4]"));
}

// ---- pad_sequence ----

TEST(PadSequence, PadsEachSequenceToTheLongestTimeMajor) {
  const Tensor a = tensor({1.0, 2.0, 3.0}).view({3, 1});
  const Tensor b = tensor({4.0}).view({1, 1});
  const Tensor c = tensor({5.0, 6.0}).view({2, 1});
  const Tensor padded =
      nn::utils::rnn::pad_sequence({a, b, c}, /*batch_first=*/false, -1.0);
  ASSERT_EQ(padded.sizes(), IntList({3, 3, 1}));
  // PyTorch: pad_sequence([a, b, c], padding_value=-1)[..., 0]
  EXPECT_TRUE(
      all_close(padded.view({3, 3}),
                tensor({1.0, 4.0, 5.0, 2.0, -1.0, 6.0, 3.0, -1.0, -1.0}).view({3, 3}),
                0,
                0));
}

TEST(PadSequence, BatchFirstPutsTheSequencesInDimZero) {
  const Tensor a = randn({4, 2, 3});
  const Tensor b = randn({2, 2, 3});
  const Tensor padded = nn::utils::rnn::pad_sequence({a, b}, /*batch_first=*/true);
  ASSERT_EQ(padded.sizes(), IntList({2, 4, 2, 3}));
  EXPECT_TRUE(all_close(padded.select(0, 0), a, 0, 0));
  EXPECT_TRUE(all_close(padded.select(0, 1).narrow(0, 0, 2), b, 0, 0));
  EXPECT_TRUE(all_close(padded.select(0, 1).narrow(0, 2, 2), zeros({2, 2, 3}), 0, 0));
}

TEST(PadSequence, GradientsReachEverySequenceAndSkipThePadding) {
  const Tensor a = randn({3, 2}, kFloat64).requires_grad_();
  const Tensor b = randn({1, 2}, kFloat64).requires_grad_();
  EXPECT_TRUE(autograd::gradcheck(
      [](const autograd::tensor_list& in) {
        return nn::utils::rnn::pad_sequence(in, false, 0.5);
      },
      {a, b}));
  const Tensor weights = arange(12, kFloat64).view({3, 2, 2});
  (nn::utils::rnn::pad_sequence({a, b}) * weights).sum().backward();
  EXPECT_TRUE(all_close(a.grad(), weights.select(1, 0), 0, 0));
  EXPECT_TRUE(all_close(b.grad(), weights.select(1, 1).narrow(0, 0, 1), 0, 0));
}

TEST(PadSequence, RefusesMismatchedSequencesNamingThem) {
  EXPECT_TRUE(
      throws_with([] { nn::utils::rnn::pad_sequence({}); }, "at least one sequence"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::utils::rnn::pad_sequence({zeros({2, 3}), zeros({2, 4})});
      },
      "sequence 1 has sizes [2, 4] but sequence 0 has [2, 3]"));
  EXPECT_TRUE(throws_with(
      [] {
        nn::utils::rnn::pad_sequence({zeros({2}), zeros({2}, kFloat64)});
      },
      "sequence 1 is float64"));
  EXPECT_TRUE(throws_with([] { nn::utils::rnn::pad_sequence({zeros({})}); }, "0-dim"));
}

}  // namespace
}  // namespace tandem
