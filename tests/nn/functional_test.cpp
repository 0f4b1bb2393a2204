// nn::functional: the option-struct forms forward to the ops.
#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace F = tandem::nn::functional;
using tandem::Tensor;
using tandem::testing::all_close;

TEST(Functional, Activations) {
  Tensor x = tandem::randn({3, 5});
  Tensor w = tandem::randn({2, 5});
  Tensor b = tandem::randn({2});
  EXPECT_TRUE(all_close(F::linear(x, w, b), tandem::linear(x, w, b)));
  EXPECT_TRUE(all_close(F::linear(x, w), tandem::linear(x, w)));
  EXPECT_TRUE(all_close(F::relu(x), tandem::relu(x)));
  EXPECT_TRUE(all_close(F::gelu(x, F::GELUFuncOptions().approximate("tanh")),
                        tandem::gelu(x, "tanh")));
  EXPECT_TRUE(all_close(F::tanh(x), tandem::tanh(x)));
  EXPECT_TRUE(all_close(F::sigmoid(x), tandem::sigmoid(x)));
  EXPECT_TRUE(all_close(F::softmax(x, F::SoftmaxFuncOptions(1)), tandem::softmax(x, 1)));
  EXPECT_TRUE(all_close(F::log_softmax(x, F::LogSoftmaxFuncOptions(0)),
                        tandem::log_softmax(x, 0)));
  Tensor p64 = F::softmax(x, F::SoftmaxFuncOptions(1).dtype(tandem::kFloat64));
  EXPECT_EQ(p64.dtype(), tandem::kFloat64);
  EXPECT_TRUE(all_close(p64, tandem::softmax(x.to(tandem::kFloat64), 1)));
}

TEST(Functional, ReLUInplace) {
  Tensor x = tandem::tensor<float>({-1, 1});
  F::relu(x, F::ReLUFuncOptions().inplace(true));
  EXPECT_TRUE(all_close(x, tandem::tensor<float>({0, 1})));
}

TEST(Functional, DropoutFollowsTraining) {
  Tensor x = tandem::ones({2000});
  EXPECT_TRUE(
      all_close(F::dropout(x, F::DropoutFuncOptions().p(0.5).training(false)), x));
  Tensor y = F::dropout(x, F::DropoutFuncOptions().p(0.5));  // training by default
  const double zeros = (y == 0).to(tandem::kFloat64).sum().item<double>();
  EXPECT_GT(zeros, 850);
  EXPECT_LT(zeros, 1150);
}

TEST(Functional, EmbeddingAndLosses) {
  Tensor weight = tandem::randn({5, 3});
  Tensor ids = tandem::tensor<int64_t>({4, 0, 4});
  EXPECT_TRUE(all_close(F::embedding(ids, weight), tandem::embedding(weight, ids)));
  EXPECT_TRUE(
      all_close(F::embedding(ids, weight, F::EmbeddingFuncOptions().padding_idx(0)),
                tandem::embedding(weight, ids, 0)));

  Tensor logits = tandem::randn({4, 3});
  Tensor target = tandem::tensor<int64_t>({2, 0, 1, 2});
  EXPECT_TRUE(
      all_close(F::cross_entropy(logits, target), tandem::cross_entropy(logits, target)));
  EXPECT_TRUE(all_close(
      F::cross_entropy(
          logits,
          target,
          F::CrossEntropyFuncOptions().reduction(tandem::kNone).ignore_index(0)),
      tandem::cross_entropy(logits, target, Tensor(), tandem::kNone, 0)));
  Tensor logp = tandem::log_softmax(logits, 1);
  EXPECT_TRUE(all_close(
      F::nll_loss(logp, target, F::NLLLossFuncOptions().reduction(tandem::kSum)),
      tandem::nll_loss(logp, target, Tensor(), tandem::kSum)));
  Tensor a = tandem::randn({4});
  EXPECT_TRUE(all_close(F::mse_loss(a, a * 2, F::MSELossFuncOptions(tandem::kSum)),
                        tandem::mse_loss(a, a * 2, tandem::kSum)));
}

}  // namespace
