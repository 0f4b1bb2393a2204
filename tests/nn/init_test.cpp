// nn::init: PyTorch's formulas, checked by bounds and moments, and seeding.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
namespace init = tandem::nn::init;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

double min_of(const Tensor& t) { return t.min().item<double>(); }
double max_of(const Tensor& t) { return t.max().item<double>(); }
double mean_of(const Tensor& t) { return t.to(tandem::kFloat64).mean().item<double>(); }
double std_of(const Tensor& t) {
  Tensor d = t.to(tandem::kFloat64);
  Tensor c = d - d.mean();
  return std::sqrt((c * c).mean().item<double>());
}

TEST(Init, Gains) {
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kLinear), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kConv2D), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kSigmoid), 1.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kTanh), 5.0 / 3);
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kLeakyReLU), std::sqrt(2.0 / (1 + 1e-4)));
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kLeakyReLU, std::sqrt(5.0)),
                   std::sqrt(1.0 / 3));
  EXPECT_DOUBLE_EQ(init::calculate_gain(tandem::kSELU), 0.75);
}

TEST(Init, FanInAndFanOut) {
  auto [in2, out2] = init::calculate_fan_in_and_fan_out(tandem::empty({3, 5}));
  EXPECT_EQ(in2, 5);
  EXPECT_EQ(out2, 3);
  auto [in4, out4] = init::calculate_fan_in_and_fan_out(tandem::empty({8, 4, 3, 3}));
  EXPECT_EQ(in4, 36);
  EXPECT_EQ(out4, 72);
  EXPECT_TRUE(throws_with([] { init::calculate_fan_in_and_fan_out(tandem::empty({5})); },
                          "Fan in and fan out can not be computed for tensor with fewer "
                          "than 2 dimensions"));
}

TEST(Init, FillersAndPlainDistributions) {
  Tensor t = tandem::empty({200, 100}, tandem::requires_grad());
  init::constant_(t, 0.5);
  EXPECT_TRUE(all_close(t, tandem::full({200, 100}, 0.5)));
  EXPECT_TRUE(t.requires_grad());
  EXPECT_EQ(t.grad_fn(), nullptr);  // filled without recording history
  init::zeros_(t);
  EXPECT_EQ(max_of(t), 0.0);
  init::ones_(t);
  EXPECT_EQ(min_of(t), 1.0);
  init::uniform_(t, -2, 3);
  EXPECT_GE(min_of(t), -2.0);
  EXPECT_LT(max_of(t), 3.0);
  EXPECT_NEAR(mean_of(t), 0.5, 0.05);
  init::normal_(t, 1, 2);
  EXPECT_NEAR(mean_of(t), 1.0, 0.07);
  EXPECT_NEAR(std_of(t), 2.0, 0.05);
}

TEST(Init, KaimingAndXavier) {
  Tensor w = tandem::empty({300, 200});  // fan_in 200, fan_out 300
  init::kaiming_uniform_(w, 0, tandem::kFanIn, tandem::kReLU);
  const double bound = std::sqrt(2.0) * std::sqrt(3.0 / 200);
  EXPECT_GE(min_of(w), -bound);
  EXPECT_LE(max_of(w), bound);
  EXPECT_GT(max_of(w), 0.98 * bound);
  EXPECT_NEAR(std_of(w), bound / std::sqrt(3.0), 0.02 * bound);

  init::kaiming_normal_(w, 0, tandem::kFanOut, tandem::kReLU);
  EXPECT_NEAR(std_of(w), std::sqrt(2.0 / 300), 0.02 * std::sqrt(2.0 / 300));
  EXPECT_NEAR(mean_of(w), 0.0, 0.005);

  init::xavier_uniform_(w, 2.0);
  const double a = 2.0 * std::sqrt(6.0 / 500);
  EXPECT_GE(min_of(w), -a);
  EXPECT_LE(max_of(w), a);
  EXPECT_GT(max_of(w), 0.98 * a);

  init::xavier_normal_(w);
  EXPECT_NEAR(std_of(w), std::sqrt(2.0 / 500), 0.02 * std::sqrt(2.0 / 500));
}

TEST(Init, LinearDefaultsMatchPyTorch) {
  nn::Linear fc(400, 300);
  const double bound = 1 / std::sqrt(400.0);  // kaiming_uniform_(a=sqrt(5))
  EXPECT_GE(min_of(fc->weight), -bound);
  EXPECT_LE(max_of(fc->weight), bound);
  EXPECT_GT(max_of(fc->weight), 0.99 * bound);
  EXPECT_LT(min_of(fc->weight), -0.99 * bound);
  EXPECT_NEAR(std_of(fc->weight), bound / std::sqrt(3.0), 0.01 * bound);
  EXPECT_GE(min_of(fc->bias), -bound);
  EXPECT_LE(max_of(fc->bias), bound);
  EXPECT_GT(max_of(fc->bias), 0.8 * bound);
}

TEST(Init, EmbeddingIsStandardNormal) {
  nn::Embedding emb(nn::EmbeddingOptions(500, 100).padding_idx(3));
  EXPECT_NEAR(mean_of(emb->weight), 0.0, 0.02);
  EXPECT_NEAR(std_of(emb->weight), 1.0, 0.02);
  EXPECT_TRUE(all_close(emb->weight.select(0, 3), tandem::zeros({100})));
}

TEST(Init, ManualSeedMakesConstructionReproducible) {
  tandem::manual_seed(123);
  nn::Sequential a(nn::Linear(6, 5), nn::ReLU(), nn::Embedding(4, 3));
  tandem::manual_seed(123);
  nn::Sequential b(nn::Linear(6, 5), nn::ReLU(), nn::Embedding(4, 3));
  nn::Sequential c(nn::Linear(6, 5), nn::ReLU(), nn::Embedding(4, 3));
  for (const auto& item : a->named_parameters()) {
    EXPECT_TRUE(all_close(b->named_parameters()[item.key()], item.value(), 0, 0));
    EXPECT_FALSE(all_close(c->named_parameters()[item.key()], item.value()));
  }
}

}  // namespace
