// The transformer modules: options and their defaults (LibTorch's, with
// PyTorch's layer_norm_eps, batch_first, norm_first), parameter names,
// clones in the stacks, Transformer's xavier re-initialisation,
// generate_square_subsequent_mask, activations, printing, errors, clone,
// eval-mode dropout, and gradcheck of an encoder layer in float64.
#include <cmath>
#include <limits>
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
using tandem::IntList;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

std::vector<std::string> names(const nn::Module& m) {
  return m.named_parameters().keys();
}

TEST(TransformerModules, OptionsDefaults) {
  nn::TransformerEncoderLayerOptions e(32, 4);
  EXPECT_EQ(e.d_model(), 32);
  EXPECT_EQ(e.nhead(), 4);
  EXPECT_EQ(e.dim_feedforward(), 2048);
  EXPECT_EQ(e.dropout(), 0.1);
  EXPECT_EQ(e.activation().kind(), nn::TransformerActivation::Kind::ReLU);
  EXPECT_EQ(e.layer_norm_eps(), 1e-5);
  EXPECT_FALSE(e.batch_first());
  EXPECT_FALSE(e.norm_first());
  EXPECT_EQ(e.activation(tandem::kGELU).activation().name(), "gelu");
  EXPECT_EQ(e.activation(tandem::kReLU).activation().name(), "relu");
  EXPECT_EQ(
      nn::TransformerDecoderLayerOptions(8, 2).activation("gelu").activation().name(),
      "gelu");
  nn::TransformerOptions t;
  EXPECT_EQ(t.d_model(), 512);
  EXPECT_EQ(t.nhead(), 8);
  EXPECT_EQ(t.num_encoder_layers(), 6);
  EXPECT_EQ(t.num_decoder_layers(), 6);
  EXPECT_EQ(t.dim_feedforward(), 2048);
  EXPECT_EQ(t.dropout(), 0.1);
  EXPECT_EQ(nn::TransformerOptions(16, 2, 3, 1).num_decoder_layers(), 1);
  EXPECT_TRUE(throws_with([] { nn::TransformerActivation("tanh"); },
                          "activation should be relu/gelu, not tanh"));
  EXPECT_TRUE(throws_with([] { nn::TransformerActivation a(tandem::kSigmoid); },
                          "must be kReLU, kGELU or a function"));
}

TEST(TransformerModules, EncoderLayerNamesAndForward) {
  tandem::manual_seed(0);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  EXPECT_EQ(names(*layer),
            (std::vector<std::string>{"self_attn.in_proj_weight",
                                      "self_attn.in_proj_bias",
                                      "self_attn.out_proj.weight",
                                      "self_attn.out_proj.bias",
                                      "linear1.weight",
                                      "linear1.bias",
                                      "linear2.weight",
                                      "linear2.bias",
                                      "norm1.weight",
                                      "norm1.bias",
                                      "norm2.weight",
                                      "norm2.bias"}));
  EXPECT_EQ(layer->linear1->weight.sizes(), (IntList{16, 8}));
  const Tensor x = tandem::randn({5, 3, 8});
  const Tensor y = layer->forward(x);
  EXPECT_EQ(y.sizes(), (IntList{5, 3, 8}));
  // Post-LN by hand.
  Tensor a = std::get<0>(layer->self_attn->forward(x, x, x));
  Tensor h = layer->norm1->forward(x + a);
  Tensor want = layer->norm2->forward(
      h + layer->linear2->forward(tandem::relu(layer->linear1->forward(h))));
  EXPECT_TRUE(all_close(y, want, 1e-5, 1e-6));
  // A custom activation.
  layer->options.activation([](const Tensor& t) { return tandem::tanh(t); });
  Tensor want_tanh = layer->norm2->forward(
      h + layer->linear2->forward(tandem::tanh(layer->linear1->forward(h))));
  EXPECT_TRUE(all_close(layer->forward(x), want_tanh, 1e-5, 1e-6));
  // Unbatched [L, E].
  EXPECT_EQ(layer->forward(x.select(1, 0)).sizes(), (IntList{5, 8}));
}

TEST(TransformerModules, StacksCloneTheLayer) {
  tandem::manual_seed(1);
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(layer, 3).norm(
      nn::AnyModule(nn::LayerNorm(nn::LayerNormOptions({8})))));
  EXPECT_EQ(encoder->layers->size(), 3u);
  const auto params = encoder->named_parameters();
  EXPECT_EQ(params.size(), 3u * 12 + 2);
  EXPECT_TRUE(params.contains("layers.2.self_attn.out_proj.weight"));
  EXPECT_TRUE(params.contains("norm.weight"));
  // Each clone starts equal to the layer (PyTorch's deepcopy) but owns
  // its storage.
  const Tensor w0 = params["layers.0.linear1.weight"];
  const Tensor w2 = params["layers.2.linear1.weight"];
  EXPECT_TRUE(all_close(w0, layer->linear1->weight, 0, 0));
  EXPECT_TRUE(all_close(w2, layer->linear1->weight, 0, 0));
  EXPECT_NE(w0.data_ptr(), w2.data_ptr());
  EXPECT_NE(w0.data_ptr(), layer->linear1->weight.data_ptr());
  // No norm: no norm parameters.
  nn::TransformerDecoder decoder(
      nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(8, 2), 2));
  EXPECT_TRUE(decoder->norm.is_empty());
  EXPECT_EQ(decoder->named_parameters().size(), 2u * 18);
  EXPECT_TRUE(
      decoder->named_parameters().contains("layers.1.multihead_attn.in_proj_weight"));
  EXPECT_TRUE(decoder->named_parameters().contains("layers.1.norm3.bias"));
}

TEST(TransformerModules, TransformerInitMaskAndShapes) {
  tandem::manual_seed(2);
  nn::Transformer model(
      nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16).dropout(0.0));
  const auto params = model->named_parameters();
  EXPECT_EQ(params.size(), 2u * 12 + 2 + 18 + 2);
  EXPECT_TRUE(params.contains("encoder.layers.1.norm2.weight"));
  EXPECT_TRUE(params.contains("encoder.norm.bias"));
  EXPECT_TRUE(params.contains("decoder.norm.weight"));
  // xavier_uniform_ on every matrix: linear1's bound sqrt(6 / 24), not
  // Linear's 1 / sqrt(8); the encoder layers differ after it.
  const Tensor w = params["encoder.layers.0.linear1.weight"];
  EXPECT_LE(tandem::abs(w).max().item<float>(), std::sqrt(6.0 / 24));
  EXPECT_GT(tandem::abs(w).max().item<float>(), 1 / std::sqrt(8.0));
  EXPECT_FALSE(all_close(w, params["encoder.layers.1.linear1.weight"], 1e-3, 1e-3));
  EXPECT_EQ(
      tandem::abs(params["encoder.layers.0.self_attn.in_proj_bias"]).max().item<float>(),
      0.0f);

  const Tensor mask = nn::TransformerImpl::generate_square_subsequent_mask(3);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(tandem::equal(
      mask, tandem::tensor<float>({0, -inf, -inf, 0, 0, -inf, 0, 0, 0}).reshape({3, 3})));
  EXPECT_EQ(
      nn::TransformerImpl::generate_square_subsequent_mask(2, tandem::kFloat64).dtype(),
      tandem::kFloat64);

  const Tensor src = tandem::randn({5, 2, 8}), tgt = tandem::randn({3, 2, 8});
  const Tensor out = model->forward(src, tgt, {}, mask);
  EXPECT_EQ(out.sizes(), (IntList{3, 2, 8}));
  // The decoder's causal mask: the first target position does not see
  // the later ones.
  Tensor tgt2 = tgt.clone();
  {
    tandem::NoGradGuard no_grad;
    tgt2.narrow(0, 1, 2).fill_(5.0);
  }
  const Tensor out2 = model->forward(src, tgt2, {}, mask);
  EXPECT_TRUE(all_close(out2.select(0, 0), out.select(0, 0), 1e-5, 1e-6));
  EXPECT_FALSE(all_close(out2.select(0, 1), out.select(0, 1), 1e-3, 1e-3));
  // The same through encoder and decoder by hand.
  const Tensor memory = model->encoder->forward(src);
  EXPECT_TRUE(all_close(model->decoder->forward(tgt, memory, mask), out, 1e-6, 1e-7));
}

TEST(TransformerModules, CloneEvalAndPrinting) {
  tandem::manual_seed(3);
  nn::Transformer model(
      nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(16).dropout(0.5));
  auto copy = std::dynamic_pointer_cast<nn::TransformerImpl>(model->clone());
  ASSERT_NE(copy, nullptr);
  const Tensor src = tandem::randn({4, 2, 8}), tgt = tandem::randn({3, 2, 8});
  model->eval();
  copy->eval();
  const Tensor a = model->forward(src, tgt);
  EXPECT_TRUE(all_close(copy->forward(src, tgt), a, 0, 0));
  EXPECT_TRUE(all_close(model->forward(src, tgt), a, 0, 0));
  model->train();
  EXPECT_FALSE(all_close(model->forward(src, tgt), a, 1e-3, 1e-3));
  // The clone's parameters are its own.
  EXPECT_NE(copy->named_parameters()["decoder.layers.0.linear2.weight"].data_ptr(),
            model->named_parameters()["decoder.layers.0.linear2.weight"].data_ptr());

  std::ostringstream s;
  s << nn::TransformerEncoderLayer(
      nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(6));
  EXPECT_EQ(s.str(),
            "TransformerEncoderLayer(\n"
            "  (self_attn): MultiheadAttention(\n"
            "    (out_proj): Linear(in_features=4, out_features=4, bias=true)\n"
            "  )\n"
            "  (linear1): Linear(in_features=4, out_features=6, bias=true)\n"
            "  (dropout): Dropout(p=0.1)\n"
            "  (linear2): Linear(in_features=6, out_features=4, bias=true)\n"
            "  (norm1): LayerNorm([4], eps=1e-05, elementwise_affine=true)\n"
            "  (norm2): LayerNorm([4], eps=1e-05, elementwise_affine=true)\n"
            "  (dropout1): Dropout(p=0.1)\n"
            "  (dropout2): Dropout(p=0.1)\n"
            ")");
}

TEST(TransformerModules, ErrorsNameTheModuleAndShapes) {
  EXPECT_TRUE(
      throws_with([] { nn::TransformerEncoderLayer(10, 4); },
                  "TransformerEncoderLayer: d_model must be divisible by nhead, got "
                  "d_model 10 and nhead 4"));
  EXPECT_TRUE(
      throws_with([] { nn::TransformerDecoder(nn::TransformerDecoderLayer(8, 2), 0); },
                  "TransformerDecoder: num_layers must be positive, got 0"));
  EXPECT_TRUE(
      throws_with([] { nn::TransformerEncoder(nn::TransformerEncoderLayer(nullptr), 2); },
                  "TransformerEncoder: the layer to clone is empty"));
  nn::TransformerEncoderLayer layer(
      nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(4));
  EXPECT_TRUE(throws_with(
      [&] {
        layer->forward(tandem::randn({5, 2, 6}));
      },
      "TransformerEncoderLayer: expected src of 2 or 3 dims with "
      "d_model=8 features (last dim), got shape [5, 2, 6]"));
  EXPECT_TRUE(throws_with(
      [&] {
        layer->forward(tandem::randn({5, 2, 8}), tandem::zeros({5, 4}));
      },
      "MultiheadAttention: the shape of the 2-D attn_mask is [5, 4], but should be [5, "
      "5]"));
  nn::TransformerDecoderLayer dec(
      nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(4));
  EXPECT_TRUE(throws_with(
      [&] {
        dec->forward(tandem::randn({3, 2, 8}), tandem::randn({4, 8}));
      },
      "MultiheadAttention: for batched (3-D) query, expected key and "
      "value to be 3-D, got shapes [4, 8] and [4, 8]"));
  nn::Transformer model(nn::TransformerOptions(8, 2, 1, 1).dim_feedforward(4));
  EXPECT_TRUE(throws_with(
      [&] {
        model->forward(tandem::randn({4, 2, 8}), tandem::randn({3, 3, 8}));
      },
      "Transformer: the batch number of src and tgt must be equal, got shapes "
      "[4, 2, 8] and [3, 3, 8]"));
  EXPECT_TRUE(throws_with(
      [&] {
        model->forward(tandem::randn({4, 2, 8}), tandem::randn({3, 2, 7}));
      },
      "Transformer: the feature number of src and tgt must be equal to "
      "d_model=8"));
}

TEST(TransformerModules, EncoderLayerGradcheckFloat64) {
  tandem::manual_seed(4);
  const auto f64 = tandem::TensorOptions(tandem::kFloat64).requires_grad(true);
  for (bool norm_first : {false, true}) {
    SCOPED_TRACE(norm_first);
    nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(4, 2)
                                          .dim_feedforward(6)
                                          .dropout(0.0)
                                          .activation(tandem::kGELU)
                                          .norm_first(norm_first)
                                          .batch_first(true));
    layer->to(tandem::kFloat64);
    const Tensor x = tandem::randn({2, 3, 4}, f64);
    const Tensor causal =
        nn::TransformerImpl::generate_square_subsequent_mask(3, tandem::kFloat64);
    tandem::autograd::tensor_list inputs{x};
    for (const Tensor& p : layer->parameters()) inputs.push_back(p);
    auto r = tandem::autograd::gradcheck(
        [&](const tandem::autograd::tensor_list& in) {
          return layer->forward(in[0], causal);
        },
        inputs);
    EXPECT_TRUE(r.ok) << r.message;
  }
}

}  // namespace
