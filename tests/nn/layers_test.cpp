// Every layer's forward against the op it wraps, options, and errors.
#include <cmath>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

TEST(Layers, Linear) {
  nn::Linear fc(5, 3);
  EXPECT_EQ(fc->weight.sizes(), (tandem::IntList{3, 5}));
  EXPECT_EQ(fc->bias.sizes(), (tandem::IntList{3}));
  EXPECT_EQ(fc->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  Tensor x = tandem::randn({4, 5});
  EXPECT_TRUE(all_close(fc->forward(x), tandem::linear(x, fc->weight, fc->bias)));
  Tensor manual = tandem::matmul(x, fc->weight.t()) + fc->bias;
  EXPECT_TRUE(all_close(fc->forward(x), manual, 1e-5, 1e-6));

  nn::Linear no_bias(nn::LinearOptions(5, 3).bias(false));
  EXPECT_FALSE(no_bias->bias.defined());
  EXPECT_EQ(no_bias->parameters().size(), 1u);
  EXPECT_TRUE(
      all_close(no_bias->forward(x), tandem::matmul(x, no_bias->weight.t()), 1e-5, 1e-6));
}

TEST(Layers, LinearShapeErrorComesFromTheOp) {
  nn::Linear fc(5, 3);
  // The message is tandem::linear's: it names the op and the shapes.
  EXPECT_TRUE(throws_with(
      [&] {
        fc->forward(tandem::ones({30, 4}));
      },
      "linear: input has 4 features (shape [30, 4]) but weight expects 5"));
}

TEST(Layers, Embedding) {
  nn::Embedding emb(nn::EmbeddingOptions(10, 4).padding_idx(-1));
  EXPECT_EQ(emb->options.padding_idx(), std::optional<int64_t>(9));  // made positive
  EXPECT_TRUE(all_close(emb->weight.select(0, 9), tandem::zeros({4})));
  Tensor ids = tandem::tensor<int64_t>({1, 9, 3, 1});
  Tensor out = emb->forward(ids);
  EXPECT_EQ(out.sizes(), (tandem::IntList{4, 4}));
  EXPECT_TRUE(all_close(out, tandem::index_select(emb->weight, 0, ids)));
  out.sum().backward();
  // The padding row gets no gradient; row 1 was used twice.
  EXPECT_TRUE(all_close(emb->weight.grad().select(0, 9), tandem::zeros({4})));
  EXPECT_TRUE(all_close(emb->weight.grad().select(0, 1), tandem::full({4}, 2.0)));
  EXPECT_TRUE(
      throws_with([] { nn::Embedding(nn::EmbeddingOptions(3, 2).padding_idx(3)); },
                  "padding_idx must be within num_embeddings"));
  nn::Embedding plain(3, 2);
  EXPECT_FALSE(plain->options.padding_idx().has_value());
}

TEST(Layers, Activations) {
  Tensor x = tandem::randn({3, 4});
  EXPECT_TRUE(all_close(nn::ReLU()->forward(x), tandem::relu(x)));
  EXPECT_TRUE(all_close(nn::GELU()->forward(x), tandem::gelu(x)));
  EXPECT_TRUE(all_close(nn::GELU(nn::GELUOptions().approximate("tanh"))->forward(x),
                        tandem::gelu(x, "tanh")));
  EXPECT_TRUE(all_close(nn::Tanh()->forward(x), tandem::tanh(x)));
  EXPECT_TRUE(all_close(nn::Sigmoid()->forward(x), tandem::sigmoid(x)));
  EXPECT_TRUE(all_close(nn::Softmax(1)->forward(x), tandem::softmax(x, 1)));
  EXPECT_TRUE(
      all_close(nn::Softmax(nn::SoftmaxOptions(0))->forward(x), tandem::softmax(x, 0)));
  EXPECT_TRUE(all_close(nn::LogSoftmax(1)->forward(x), tandem::log_softmax(x, 1)));
  EXPECT_TRUE(all_close(nn::Identity()->forward(x), x));
  EXPECT_TRUE(throws_with([] { nn::GELU(nn::GELUOptions().approximate("fast")); },
                          "approximate must be \"none\" or \"tanh\""));
}

TEST(Layers, ReLUInplaceOverwritesItsInput) {
  Tensor x = tandem::tensor<float>({-1, 2, -3});
  nn::ReLU relu(nn::ReLUOptions().inplace(true));
  Tensor y = relu->forward(x);
  EXPECT_TRUE(all_close(x, tandem::tensor<float>({0, 2, 0})));
  EXPECT_EQ(y.data_ptr(), x.data_ptr());
}

TEST(Layers, Dropout) {
  nn::Dropout drop(nn::DropoutOptions(0.25));
  EXPECT_EQ(drop->options.p(), 0.25);
  Tensor x = tandem::ones({4000});
  Tensor y = drop->forward(x);
  const double kept = (y != 0).to(tandem::kFloat64).mean().item<double>();
  EXPECT_NEAR(kept, 0.75, 0.03);
  EXPECT_TRUE(all_close(y.max(), tandem::scalar_tensor(1 / 0.75)));
  drop->eval();
  EXPECT_TRUE(all_close(drop->forward(x), x));
  EXPECT_TRUE(throws_with([] { nn::Dropout(1.5); },
                          "probability has to be between 0 and 1, but got 1.5"));
}

TEST(Layers, Flatten) {
  Tensor x = tandem::randn({2, 3, 4, 5});
  EXPECT_EQ(nn::Flatten()->forward(x).sizes(), (tandem::IntList{2, 60}));
  nn::Flatten middle(nn::FlattenOptions().start_dim(1).end_dim(2));
  EXPECT_EQ(middle->forward(x).sizes(), (tandem::IntList{2, 12, 5}));
  EXPECT_TRUE(all_close(middle->forward(x), tandem::flatten(x, 1, 2)));
}

TEST(Layers, Losses) {
  Tensor logits = tandem::randn({6, 4});
  Tensor target = tandem::tensor<int64_t>({0, 3, 1, 1, 2, 3});
  Tensor w = tandem::tensor<float>({1, 2, 0.5, 1});

  EXPECT_TRUE(all_close(nn::CrossEntropyLoss()->forward(logits, target),
                        tandem::cross_entropy(logits, target)));
  nn::CrossEntropyLoss ce(nn::CrossEntropyLossOptions()
                              .weight(w)
                              .ignore_index(1)
                              .reduction(tandem::kSum)
                              .label_smoothing(0.1));
  EXPECT_TRUE(all_close(ce(logits, target),
                        tandem::cross_entropy(logits, target, w, tandem::kSum, 1, 0.1)));
  EXPECT_EQ(ce->named_buffers().keys(), (std::vector<std::string>{"weight"}));
  EXPECT_TRUE(nn::CrossEntropyLoss()->named_buffers().is_empty());

  Tensor logp = tandem::log_softmax(logits, 1);
  nn::NLLLoss nll(nn::NLLLossOptions().weight(w).reduction(tandem::kNone));
  EXPECT_TRUE(
      all_close(nll(logp, target), tandem::nll_loss(logp, target, w, tandem::kNone)));
  EXPECT_TRUE(
      all_close(nn::NLLLoss()->forward(logp, target), tandem::nll_loss(logp, target)));

  Tensor a = tandem::randn({3, 2});
  Tensor b = tandem::randn({3, 2});
  EXPECT_TRUE(all_close(nn::MSELoss()->forward(a, b), ((a - b) * (a - b)).mean()));
  EXPECT_TRUE(all_close(nn::MSELoss(nn::MSELossOptions().reduction(tandem::kSum))(a, b),
                        tandem::mse_loss(a, b, tandem::kSum)));
}

TEST(Layers, LossWeightMovesWithTheModule) {
  nn::CrossEntropyLoss ce(
      nn::CrossEntropyLossOptions().weight(tandem::tensor<float>({1, 2, 3})));
  ce->to(tandem::kFloat64);
  EXPECT_EQ(ce->weight.dtype(), tandem::kFloat64);
}

}  // namespace
