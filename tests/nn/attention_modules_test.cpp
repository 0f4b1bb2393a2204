// MultiheadAttention as a module: LibTorch's parameter names and shapes,
// PyTorch's initialisation, options, printing, result shapes (batch_first,
// unbatched, weights averaged or per head, none), masks, the functional
// form, dropout, errors that name the module and the shapes, and gradcheck
// in float64 through the masks, bias_kv and zero_attn.
#include <cmath>
#include <limits>
#include <sstream>

#include "support/tensor_testing.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
namespace F = tandem::nn::functional;
using tandem::IntList;
using tandem::Tensor;
using tandem::testing::all_close;
using tandem::testing::throws_with;

std::vector<std::string> names(const nn::Module& m) {
  return m.named_parameters().keys();
}

double max_abs(const Tensor& t) { return tandem::abs(t).max().item<float>(); }

TEST(MultiheadAttentionModule, ParameterNamesShapesAndInit) {
  tandem::manual_seed(0);
  nn::MultiheadAttention mha(8, 2);
  EXPECT_EQ(names(*mha),
            (std::vector<std::string>{
                "in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  EXPECT_EQ(mha->in_proj_weight.sizes(), (IntList{24, 8}));
  EXPECT_EQ(mha->in_proj_bias.sizes(), (IntList{24}));
  EXPECT_EQ(mha->out_proj->weight.sizes(), (IntList{8, 8}));
  EXPECT_TRUE(mha->_qkv_same_embed_dim);
  EXPECT_EQ(mha->head_dim, 4);
  EXPECT_FALSE(mha->q_proj_weight.defined());
  EXPECT_FALSE(mha->bias_k.defined());
  // xavier_uniform_ over [24, 8]: bound sqrt(6 / 32); out_proj as Linear:
  // bound 1 / sqrt(8); both biases zero.
  EXPECT_LE(max_abs(mha->in_proj_weight), std::sqrt(6.0 / 32));
  EXPECT_GT(max_abs(mha->in_proj_weight), 0.7 * std::sqrt(6.0 / 32));
  EXPECT_LE(max_abs(mha->out_proj->weight), 1 / std::sqrt(8.0));
  EXPECT_EQ(max_abs(mha->in_proj_bias), 0.0);
  EXPECT_EQ(max_abs(mha->out_proj->bias), 0.0);

  nn::MultiheadAttention cross(
      nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(6).add_bias_kv(true));
  EXPECT_EQ(names(*cross),
            (std::vector<std::string>{"q_proj_weight",
                                      "k_proj_weight",
                                      "v_proj_weight",
                                      "in_proj_bias",
                                      "bias_k",
                                      "bias_v",
                                      "out_proj.weight",
                                      "out_proj.bias"}));
  EXPECT_FALSE(cross->_qkv_same_embed_dim);
  EXPECT_FALSE(cross->in_proj_weight.defined());
  EXPECT_EQ(cross->k_proj_weight.sizes(), (IntList{8, 5}));
  EXPECT_EQ(cross->v_proj_weight.sizes(), (IntList{8, 6}));
  EXPECT_EQ(cross->bias_k.sizes(), (IntList{1, 1, 8}));
  EXPECT_LE(max_abs(cross->k_proj_weight), std::sqrt(6.0 / 13));
  EXPECT_GT(max_abs(cross->bias_k), 0.0);  // xavier_normal_

  nn::MultiheadAttention plain(nn::MultiheadAttentionOptions(8, 2).bias(false));
  EXPECT_EQ(names(*plain),
            (std::vector<std::string>{"in_proj_weight", "out_proj.weight"}));
  EXPECT_FALSE(plain->out_proj->bias.defined());
}

TEST(MultiheadAttentionModule, OptionsDefaultsAndPrinting) {
  nn::MultiheadAttentionOptions o(16, 4);
  EXPECT_EQ(o.embed_dim(), 16);
  EXPECT_EQ(o.num_heads(), 4);
  EXPECT_EQ(o.dropout(), 0.0);
  EXPECT_TRUE(o.bias());
  EXPECT_FALSE(o.add_bias_kv());
  EXPECT_FALSE(o.add_zero_attn());
  EXPECT_EQ(o.kdim(), 16);
  EXPECT_EQ(o.vdim(), 16);
  EXPECT_FALSE(o.batch_first());
  EXPECT_EQ(o.dropout(0.25).kdim(3).batch_first(true).dropout(), 0.25);
  std::ostringstream s;
  s << nn::MultiheadAttention(4, 2);
  EXPECT_EQ(s.str(),
            "MultiheadAttention(\n"
            "  (out_proj): Linear(in_features=4, out_features=4, bias=true)\n"
            ")");
}

TEST(MultiheadAttentionModule, ResultShapes) {
  tandem::manual_seed(1);
  nn::MultiheadAttention mha(8, 2);
  const Tensor q = tandem::randn({3, 2, 8}), kv = tandem::randn({5, 2, 8});
  auto [out, w] = mha->forward(q, kv, kv);
  EXPECT_EQ(out.sizes(), (IntList{3, 2, 8}));
  EXPECT_EQ(w.sizes(), (IntList{2, 3, 5}));
  EXPECT_TRUE(all_close(w.sum(-1), tandem::ones({2, 3}), 1e-5, 1e-6));
  auto [out2, per_head] = mha->forward(q, kv, kv, {}, true, {}, /*average=*/false);
  EXPECT_EQ(per_head.sizes(), (IntList{2, 2, 3, 5}));
  EXPECT_TRUE(all_close(per_head.mean(1), w, 1e-5, 1e-6));
  auto [out3, none] = mha->forward(q, kv, kv, {}, /*need_weights=*/false);
  EXPECT_FALSE(none.defined());
  EXPECT_TRUE(all_close(out3, out, 1e-6, 1e-7));
  // Unbatched: [L, E] in, [L, E] and [L, S] out, equal to a batch of one.
  auto [out4, w4] = mha->forward(q.select(1, 0), kv.select(1, 0), kv.select(1, 0));
  EXPECT_EQ(out4.sizes(), (IntList{3, 8}));
  EXPECT_EQ(w4.sizes(), (IntList{3, 5}));
  EXPECT_TRUE(all_close(out4, out.select(1, 0), 1e-5, 1e-6));
  // batch_first takes [N, L, E] and gives the same numbers transposed.
  mha->options.batch_first(true);
  auto [out5, w5] =
      mha->forward(q.transpose(0, 1), kv.transpose(0, 1), kv.transpose(0, 1));
  EXPECT_EQ(out5.sizes(), (IntList{2, 3, 8}));
  EXPECT_TRUE(all_close(out5.transpose(0, 1), out, 1e-5, 1e-6));
  EXPECT_TRUE(all_close(w5, w, 1e-5, 1e-6));
}

TEST(MultiheadAttentionModule, MasksBlockAttention) {
  tandem::manual_seed(2);
  nn::MultiheadAttention mha(4, 2);
  const Tensor x = tandem::randn({4, 3, 4});
  // Causal: no weight above the diagonal, the first query sees only itself.
  const Tensor causal = nn::TransformerImpl::generate_square_subsequent_mask(4);
  auto [out, w] = mha->forward(x, x, x, {}, true, causal);
  const Tensor above =
      tandem::gt(tandem::arange(4).unsqueeze(0), tandem::arange(4).unsqueeze(1));
  EXPECT_EQ(max_abs(tandem::where(above, w, tandem::zeros_like(w))), 0.0);
  EXPECT_TRUE(all_close(w.select(1, 0).select(1, 0), tandem::ones({3}), 1e-6, 1e-7));
  // The same mask as bool gives the same result.
  auto [out_b, w_b] = mha->forward(x, x, x, {}, true, above);
  EXPECT_TRUE(all_close(out_b, out, 1e-6, 1e-7));
  // key_padding_mask: padded keys get no weight.
  Tensor pad = tandem::zeros({3, 4}, tandem::kBool);
  pad = tandem::where(tandem::eq(tandem::arange(4).unsqueeze(0), 3).expand({3, 4}),
                      tandem::ones({3, 4}, tandem::kBool),
                      pad);
  auto [out_p, w_p] = mha->forward(x, x, x, pad);
  EXPECT_EQ(max_abs(w_p.select(2, 3)), 0.0);
  // A uint8 attn_mask is PyTorch's deprecated bool one.
  auto [out_byte, w_byte] = mha->forward(x, x, x, {}, true, above.to(tandem::kByte));
  EXPECT_TRUE(all_close(out_byte, out, 1e-6, 1e-7));
  // The same keys dropped instead: the same output.
  const Tensor x3 = x.narrow(0, 0, 3);
  auto [out_short, w_short] = mha->forward(x, x3, x3);
  EXPECT_TRUE(all_close(out_p, out_short, 1e-5, 1e-6));
}

TEST(MultiheadAttentionModule, FunctionalFormEqualsModule) {
  tandem::manual_seed(3);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(6, 3).add_zero_attn(true));
  const Tensor q = tandem::randn({2, 4, 6}), k = tandem::randn({3, 4, 6});
  const Tensor mask = tandem::randn({2, 3});
  auto [out, w] = mha->forward(q, k, k, {}, true, mask);
  auto [f_out, f_w] = F::multi_head_attention_forward(
      q,
      k,
      k,
      F::MultiheadAttentionForwardFuncOptions(6,
                                              3,
                                              mha->in_proj_weight,
                                              mha->in_proj_bias,
                                              {},
                                              {},
                                              /*add_zero_attn=*/true,
                                              0.0,
                                              mha->out_proj->weight,
                                              mha->out_proj->bias)
          .attn_mask(mask));
  EXPECT_TRUE(all_close(f_out, out, 1e-6, 1e-7));
  EXPECT_TRUE(all_close(f_w, w, 1e-6, 1e-7));
  EXPECT_EQ(w.sizes(), (IntList{4, 2, 4}));  // one more key: the zero one
}

TEST(MultiheadAttentionModule, DropoutActsOnlyInTraining) {
  tandem::manual_seed(4);
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).dropout(0.5));
  const Tensor x = tandem::randn({5, 2, 8});
  auto [a, wa] = mha->forward(x, x, x);
  auto [b, wb] = mha->forward(x, x, x);
  EXPECT_FALSE(all_close(a, b, 1e-3, 1e-3));
  // Dropped weights are 0, kept ones doubled: some rows no longer sum to 1.
  EXPECT_FALSE(all_close(wa.sum(-1), tandem::ones({2, 5}), 1e-3, 1e-3));
  mha->eval();
  auto [c, wc] = mha->forward(x, x, x);
  auto [d, wd] = mha->forward(x, x, x);
  EXPECT_TRUE(all_close(c, d, 0, 0));
  EXPECT_TRUE(all_close(wc.sum(-1), tandem::ones({2, 5}), 1e-5, 1e-6));
}

TEST(MultiheadAttentionModule, ErrorsNameTheModuleAndShapes) {
  EXPECT_TRUE(throws_with([] { nn::MultiheadAttention(10, 4); },
                          "MultiheadAttention: embed_dim must be divisible by num_heads, "
                          "got embed_dim 10 and num_heads 4"));
  EXPECT_TRUE(throws_with(
      [] { nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2).dropout(2)); },
      "dropout must be a probability"));
  nn::MultiheadAttention mha(8, 2);
  const Tensor q = tandem::randn({3, 2, 8}), k = tandem::randn({5, 2, 8});
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(q, k, k, {}, true, tandem::zeros({3, 4}));
      },
      "MultiheadAttention: the shape of the 2-D attn_mask is [3, 4], "
      "but should be [3, 5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(q, k, k, {}, true, tandem::zeros({2, 3, 5}));
      },
      "MultiheadAttention: the shape of the 3-D attn_mask is [2, 3, 5], but "
      "should be [4, 3, 5]"));
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(q, k, k, tandem::zeros({2, 4}, tandem::kBool));
      },
      "MultiheadAttention: expected key_padding_mask of shape [2, 5], got [2, 4]"));
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(q, k, k, tandem::zeros({2, 5}, tandem::kInt64));
      },
      "MultiheadAttention: only bool and floating types of key_padding_mask are "
      "supported, got"));
  EXPECT_TRUE(throws_with([&] { mha->forward(q, k, k.narrow(0, 0, 4)); },
                          "MultiheadAttention: key [5, 2, 8] and value [4, 2, 8] must "
                          "share sequence and batch sizes"));
  EXPECT_TRUE(throws_with([&] { mha->forward(q, k.select(1, 0), k); },
                          "MultiheadAttention: for batched (3-D) query, expected key and "
                          "value to be 3-D, got shapes [5, 8] and [5, 2, 8]"));
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(tandem::randn({3, 2, 6}), k, k);
      },
      "MultiheadAttention: was expecting embedding dimension of 8, got "
      "query of shape [3, 2, 6]"));
  EXPECT_TRUE(throws_with(
      [&] {
        mha->forward(q, tandem::randn({5, 2, 6}), k);
      },
      "MultiheadAttention: key shape [5, 2, 6] does not match value "
      "shape [5, 2, 8]"));
  nn::MultiheadAttention cross(nn::MultiheadAttentionOptions(8, 2).kdim(5).vdim(6));
  EXPECT_TRUE(throws_with(
      [&] {
        cross->forward(q, tandem::randn({5, 2, 5}), tandem::randn({5, 2, 5}));
      },
      "MultiheadAttention: expected v_proj_weight of shape [8, 5] for value of shape "
      "[5, 2, 5], got [8, 6]"));
  EXPECT_TRUE(throws_with(
      [&] {
        F::multi_head_attention_forward(
            q,
            k,
            k,
            F::MultiheadAttentionForwardFuncOptions(8,
                                                    3,
                                                    mha->in_proj_weight,
                                                    {},
                                                    {},
                                                    {},
                                                    false,
                                                    0.0,
                                                    mha->out_proj->weight,
                                                    {}));
      },
      "multi_head_attention_forward: embed_dim 8 not divisible by num_heads 3"));
}

// ---- gradcheck ----

::testing::AssertionResult grad_ok(const tandem::autograd::GradcheckFn& fn,
                                   const tandem::autograd::tensor_list& inputs) {
  auto r = tandem::autograd::gradcheck(fn, inputs);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.message;
}

// The module's parameters (perturbed in place by gradcheck) after `inputs`.
tandem::autograd::tensor_list with_parameters(const nn::Module& m,
                                              tandem::autograd::tensor_list inputs) {
  for (const Tensor& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

TEST(MultiheadAttentionModule, GradcheckFloat64) {
  tandem::manual_seed(5);
  const auto f64 = tandem::TensorOptions(tandem::kFloat64).requires_grad(true);
  nn::MultiheadAttention mha(
      nn::MultiheadAttentionOptions(4, 2).kdim(3).vdim(5).add_bias_kv(true).add_zero_attn(
          true));
  mha->to(tandem::kFloat64);
  const Tensor q = tandem::randn({3, 2, 4}, f64), k = tandem::randn({4, 2, 3}, f64),
               v = tandem::randn({4, 2, 5}, f64);
  const Tensor mask = tandem::randn({3, 4}, f64);  // a float mask gets a gradient
  Tensor pad = tandem::zeros({2, 4}, tandem::kBool);
  pad = tandem::where(tandem::eq(tandem::arange(4).unsqueeze(0), 2).expand({2, 4}),
                      tandem::ones({2, 4}, tandem::kBool),
                      pad);
  // Output and per-head weights, both differentiated.
  auto fn = [&](const tandem::autograd::tensor_list& in) {
    auto [out, w] = mha->forward(in[0], in[1], in[2], pad, true, in[3], false);
    return tandem::cat({out.flatten(), w.flatten()});
  };
  EXPECT_TRUE(grad_ok(fn, with_parameters(*mha, {q, k, v, mask})));

  // Self-attention (one packed product) under a causal bool mask.
  nn::MultiheadAttention self(4, 2);
  self->to(tandem::kFloat64);
  const Tensor x = tandem::randn({3, 2, 4}, f64);
  const Tensor causal =
      tandem::gt(tandem::arange(3).unsqueeze(0), tandem::arange(3).unsqueeze(1));
  auto self_fn = [&](const tandem::autograd::tensor_list& in) {
    return std::get<0>(self->forward(in[0], in[0], in[0], {}, false, causal));
  };
  EXPECT_TRUE(grad_ok(self_fn, with_parameters(*self, {x})));
}

TEST(MultiheadAttentionModule, GradgradcheckFloat64) {
  tandem::manual_seed(6);
  const auto f64 = tandem::TensorOptions(tandem::kFloat64).requires_grad(true);
  nn::MultiheadAttention mha(4, 2);
  mha->to(tandem::kFloat64);
  const Tensor q = tandem::randn({2, 2, 4}, f64), k = tandem::randn({3, 2, 4}, f64);
  const Tensor causal =
      tandem::gt(tandem::arange(3).unsqueeze(0), tandem::arange(2).unsqueeze(1));
  auto fn = [&](const tandem::autograd::tensor_list& in) {
    return std::get<0>(mha->forward(in[0], in[1], in[1], {}, false, causal));
  };
  auto r = tandem::autograd::gradgradcheck(fn, with_parameters(*mha, {q, k}));
  EXPECT_TRUE(r.ok) << r.message;
}

}  // namespace
