// The LibTorch activation and loss modules added beside ReLU and MSELoss:
// options and their defaults, forward against the op, printing, PReLU's
// parameter in state_dict, the loss modules' buffers, and option errors.
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
namespace F = tandem::nn::functional;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

template <typename T>
std::string printed(const T& module) {
  std::ostringstream out;
  out << module;
  return out.str();
}

TEST(ActivationModules, DefaultsAsLibTorch) {
  EXPECT_EQ(nn::LeakyReLUOptions().negative_slope(), 0.01);
  EXPECT_FALSE(nn::LeakyReLUOptions().inplace());
  EXPECT_EQ(nn::ELUOptions().alpha(), 1.0);
  EXPECT_EQ(nn::SoftplusOptions().beta(), 1.0);
  EXPECT_EQ(nn::SoftplusOptions().threshold(), 20.0);
  EXPECT_EQ(nn::HardtanhOptions().min_val(), -1.0);
  EXPECT_EQ(nn::HardtanhOptions().max_val(), 1.0);
  EXPECT_EQ(nn::PReLUOptions().num_parameters(), 1);
  EXPECT_EQ(nn::PReLUOptions().init(), 0.25);
  EXPECT_EQ(nn::SmoothL1LossOptions().beta(), 1.0);
  EXPECT_EQ(nn::HuberLossOptions().delta(), 1.0);
  EXPECT_EQ(nn::KLDivLossOptions().reduction(), tandem::kMean);
  EXPECT_FALSE(nn::KLDivLossOptions().log_target());
  EXPECT_EQ(nn::CosineEmbeddingLossOptions().margin(), 0.0);
  EXPECT_EQ(nn::MarginRankingLossOptions().margin(), 0.0);
  EXPECT_EQ(nn::L1LossOptions().reduction(), tandem::kMean);
}

TEST(ActivationModules, ForwardIsTheOp) {
  Tensor x = tandem::randn({3, 4});
  EXPECT_TRUE(all_close(nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2))(x),
                        tandem::leaky_relu(x, 0.2)));
  EXPECT_TRUE(all_close(nn::ELU(nn::ELUOptions().alpha(0.5))(x), tandem::elu(x, 0.5)));
  EXPECT_TRUE(all_close(nn::SELU()(x), tandem::selu(x)));
  EXPECT_TRUE(all_close(nn::SiLU()(x), tandem::silu(x)));
  EXPECT_TRUE(all_close(nn::Mish()(x), tandem::mish(x)));
  EXPECT_TRUE(all_close(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(5))(x),
                        tandem::softplus(x, 2, 5)));
  EXPECT_TRUE(all_close(nn::Hardtanh(nn::HardtanhOptions().min_val(-0.5).max_val(0.5))(x),
                        tandem::hardtanh(x, -0.5, 0.5)));
  EXPECT_TRUE(all_close(nn::LogSigmoid()(x), tandem::log_sigmoid(x)));
  EXPECT_TRUE(all_close(nn::Softsign()(x), tandem::softsign(x)));
  EXPECT_TRUE(all_close(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.3)),
                        tandem::leaky_relu(x, 0.3)));
  EXPECT_TRUE(all_close(F::logsigmoid(x), tandem::log_sigmoid(x)));
  EXPECT_TRUE(all_close(F::softplus(x, F::SoftplusFuncOptions().beta(3)),
                        tandem::softplus(x, 3)));
}

TEST(ActivationModules, InplaceOverwritesItsInput) {
  Tensor x = tandem::randn({6});
  Tensor want = tandem::elu(x, 0.5);
  Tensor y = nn::ELU(nn::ELUOptions().alpha(0.5).inplace(true))(x);
  EXPECT_TRUE(all_close(x, want, 0, 0));
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
  Tensor h = tandem::randn({6}) * 3;
  nn::Hardtanh(nn::HardtanhOptions().inplace(true))(h);
  EXPECT_LE(h.max().item<float>(), 1.0f);
  Tensor l = tandem::randn({6});
  Tensor leaky = tandem::leaky_relu(l);
  F::leaky_relu(l, F::LeakyReLUFuncOptions().inplace(true));
  EXPECT_TRUE(all_close(l, leaky, 0, 0));
}

TEST(ActivationModules, PReLUOwnsItsSlopes) {
  nn::PReLU prelu(nn::PReLUOptions().num_parameters(3).init(0.1));
  EXPECT_EQ(prelu->weight.sizes(), (tandem::IntList{3}));
  EXPECT_TRUE(prelu->weight.requires_grad());
  auto sd = prelu->state_dict();
  EXPECT_EQ(sd.keys(), (std::vector<std::string>{"weight"}));
  EXPECT_TRUE(all_close(sd["weight"], tandem::full({3}, 0.1)));
  Tensor x = tandem::randn({2, 3, 4});
  Tensor y = prelu(x);
  EXPECT_TRUE(all_close(y, tandem::prelu(x, prelu->weight)));
  y.sum().backward();
  ASSERT_TRUE(prelu->weight.grad().defined());
  // d/dw of sum(prelu) per channel: the sum of that channel's negatives.
  Tensor negatives = tandem::sum(tandem::clamp_max(x, 0), {0, 2});
  EXPECT_TRUE(all_close(prelu->weight.grad(), negatives));
  EXPECT_TRUE(throws_with([] { nn::PReLU(nn::PReLUOptions().num_parameters(0)); },
                          "PReLU: num_parameters must be at least 1, got 0"));
  EXPECT_TRUE(throws_with(
      [&] {
        prelu(tandem::randn({2, 4}));
      },
      "prelu: weight has 3 parameters but input of shape [2, 4]"));
}

TEST(ActivationModules, Printing) {
  nn::Sequential seq(
      nn::LeakyReLU(),
      nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(true)),
      nn::ELU(),
      nn::SELU(),
      nn::SiLU(),
      nn::Mish(),
      nn::Softplus(nn::SoftplusOptions().beta(2)),
      nn::Hardtanh(nn::HardtanhOptions().min_val(-2).inplace(true)),
      nn::PReLU(nn::PReLUOptions().num_parameters(4)),
      nn::LogSigmoid(),
      nn::Softsign());
  EXPECT_EQ(printed(seq),
            "Sequential(\n"
            "  (0): LeakyReLU(negative_slope=0.01)\n"
            "  (1): LeakyReLU(negative_slope=0.2, inplace=true)\n"
            "  (2): ELU(alpha=1)\n"
            "  (3): SELU()\n"
            "  (4): SiLU()\n"
            "  (5): Mish()\n"
            "  (6): Softplus(beta=2, threshold=20)\n"
            "  (7): Hardtanh(min_val=-2, max_val=1, inplace=true)\n"
            "  (8): PReLU(num_parameters=4)\n"
            "  (9): LogSigmoid()\n"
            "  (10): Softsign()\n"
            ")");
  EXPECT_EQ(printed(nn::BCELoss()), "BCELoss()");
  EXPECT_EQ(printed(nn::BCEWithLogitsLoss()), "BCEWithLogitsLoss()");
  EXPECT_EQ(printed(nn::KLDivLoss()), "KLDivLoss()");
  EXPECT_EQ(printed(nn::MarginRankingLoss()), "MarginRankingLoss()");
}

TEST(ActivationModules, OptionErrors) {
  EXPECT_TRUE(
      throws_with([] { nn::Hardtanh(nn::HardtanhOptions().min_val(2)); },
                  "Hardtanh: max_val must be greater than min_val, got min_val=2 and "
                  "max_val=1"));
  EXPECT_TRUE(throws_with([] { nn::Softplus(nn::SoftplusOptions().beta(0)); },
                          "Softplus: beta must be non-zero"));
  EXPECT_TRUE(throws_with([] { nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(-1)); },
                          "SmoothL1Loss: beta must be non-negative, got -1"));
  EXPECT_TRUE(throws_with([] { nn::HuberLoss(nn::HuberLossOptions().delta(-0.5)); },
                          "HuberLoss: delta must be positive, got -0.5"));
}

TEST(LossModules, ForwardIsTheOp) {
  Tensor x = tandem::randn({4, 3}), y = tandem::rand({4, 3});
  Tensor p = tandem::sigmoid(x);
  EXPECT_TRUE(all_close(nn::BCELoss()(p, y), tandem::binary_cross_entropy(p, y)));
  Tensor pw = tandem::full({3}, 2.0);
  nn::BCEWithLogitsLoss bce(
      nn::BCEWithLogitsLossOptions().pos_weight(pw).reduction(tandem::kSum));
  EXPECT_TRUE(all_close(
      bce(x, y), tandem::binary_cross_entropy_with_logits(x, y, {}, pw, tandem::kSum)));
  EXPECT_TRUE(
      all_close(F::binary_cross_entropy_with_logits(
                    x, y, F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(pw)),
                tandem::binary_cross_entropy_with_logits(x, y, {}, pw)));
  EXPECT_TRUE(all_close(nn::L1Loss()(x, y), tandem::l1_loss(x, y)));
  EXPECT_TRUE(all_close(nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5))(x, y),
                        tandem::smooth_l1_loss(x, y, tandem::kMean, 0.5)));
  EXPECT_TRUE(all_close(nn::HuberLoss(nn::HuberLossOptions().delta(0.5))(x, y),
                        tandem::huber_loss(x, y, tandem::kMean, 0.5)));
  Tensor log_q = tandem::log_softmax(x, 1), target = tandem::softmax(y, 1);
  EXPECT_TRUE(all_close(
      nn::KLDivLoss(nn::KLDivLossOptions().reduction(tandem::kBatchMean))(log_q, target),
      tandem::kl_div(log_q, target, tandem::kBatchMean)));
  EXPECT_TRUE(all_close(F::kl_div(log_q, target, F::KLDivFuncOptions().log_target(false)),
                        tandem::kl_div(log_q, target)));
  Tensor labels = tandem::tensor({1.0f, -1.0f, 1.0f, -1.0f});
  EXPECT_TRUE(all_close(
      nn::CosineEmbeddingLoss(nn::CosineEmbeddingLossOptions().margin(0.1))(x, y, labels),
      tandem::cosine_embedding_loss(x, y, labels, 0.1)));
  Tensor a = tandem::randn({4}), b = tandem::randn({4});
  EXPECT_TRUE(all_close(
      nn::MarginRankingLoss(nn::MarginRankingLossOptions().margin(0.2))(a, b, labels),
      tandem::margin_ranking_loss(a, b, labels, 0.2)));
}

TEST(LossModules, WeightsAreBuffers) {
  nn::BCEWithLogitsLoss bce(nn::BCEWithLogitsLossOptions()
                                .weight(tandem::ones({3}))
                                .pos_weight(tandem::full({3}, 2.0)));
  auto buffers = bce->named_buffers();
  EXPECT_EQ(buffers.keys(), (std::vector<std::string>{"weight", "pos_weight"}));
  EXPECT_TRUE(bce->parameters().empty());
  nn::BCELoss plain;
  EXPECT_TRUE(plain->named_buffers().is_empty());
}

}  // namespace
