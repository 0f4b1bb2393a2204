// MultiheadAttention and the transformer layers against PyTorch
// (tests/reference/attention.py): the modules take PyTorch's parameters by
// name, run on the same inputs and masks (bool, float, causal from
// generate_square_subsequent_mask) and must give the same outputs, attention
// weights and gradients of every input and parameter, in float32 and
// float64.
#include <algorithm>
#include <functional>
#include <limits>
#include <memory>

#include "parity/parity.h"

namespace tandem {
namespace {

namespace nn = tandem::nn;
using parity::Golden;
using parity::golden_at;

// Note [Attention gradients near zero]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The key part of in_proj_bias's gradient is zero up to rounding (the
// softmax ignores a shift of a whole row of scores), and other entries are
// small differences of terms the size of the tensor's largest ones (up to
// ~15 here). Their float32 values are rounding noise a few ulps of those
// terms wide, in PyTorch's results as in tandem's (PyTorch's own float32
// values miss its float64 ones by up to 2e-6). So the absolute floor of the
// parity tolerance is taken relative to the tensor's largest magnitude
// (when that exceeds 1); the relative tolerance stays the other tests'.
::testing::AssertionResult matches(const Tensor& got, const Tensor& want) {
  if (got.defined() && got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << got.dtype() << " != expected " << want.dtype();
  }
  const double scale = want.numel() == 0
                           ? 1.0
                           : std::max(1.0, abs(want).max().to(kFloat64).item<double>());
  return testing::all_close(
      got, want, parity::rtol_for(want.dtype()), parity::atol_for(want.dtype()) * scale);
}

using Tensors = std::map<std::string, Tensor>;
using Forward = std::function<std::vector<Tensor>(const Tensors&, const Tensors&)>;

struct Case {
  std::string name;
  std::function<std::pair<std::shared_ptr<nn::Module>, Forward>()> make;
};

constexpr int64_t E = 8, H = 2;

// The tensor named `key`, or undefined when absent (an unused mask).
Tensor at(const Tensors& tensors, const std::string& key) {
  auto it = tensors.find(key);
  return it == tensors.end() ? Tensor() : it->second;
}

// A MultiheadAttention forward: (query, key, value) picked from the
// inputs; "x" alone is self-attention (one tensor three times) and
// "query" with "memory" passes memory as both key and value.
std::pair<std::shared_ptr<nn::Module>, Forward> mha(nn::MultiheadAttentionOptions o,
                                                    bool need_weights = true,
                                                    bool average = true) {
  nn::MultiheadAttention m(o);
  return {m.ptr(),
          [m, need_weights, average](const Tensors& in, const Tensors& mask) mutable {
            Tensor q, k, v;
            if (in.count("x")) {
              q = k = v = in.at("x");
            } else if (in.count("memory")) {
              q = in.at("query");
              k = v = in.at("memory");
            } else {
              q = in.at("query"), k = in.at("key"), v = in.at("value");
            }
            auto [out, w] = m->forward(q,
                                       k,
                                       v,
                                       at(mask, "key_padding_mask"),
                                       need_weights,
                                       at(mask, "attn_mask"),
                                       average);
            if (!need_weights) {
              EXPECT_FALSE(w.defined());
              return std::vector<Tensor>{out};
            }
            return std::vector<Tensor>{out, w};
          }};
}

nn::MultiheadAttentionOptions mha_options() {
  return nn::MultiheadAttentionOptions(E, H);
}

nn::TransformerEncoderLayerOptions encoder_options() {
  return nn::TransformerEncoderLayerOptions(E, H).dim_feedforward(16).dropout(0.0);
}

nn::TransformerDecoderLayerOptions decoder_options() {
  return nn::TransformerDecoderLayerOptions(E, H).dim_feedforward(16).dropout(0.0);
}

template <typename Holder>
std::pair<std::shared_ptr<nn::Module>, Forward> encoder(Holder m) {
  return {m.ptr(), [m](const Tensors& in, const Tensors& mask) mutable {
            Tensor src_mask = at(mask, "src_mask");
            if (!src_mask.defined()) src_mask = at(mask, "mask");
            return std::vector<Tensor>{
                m->forward(in.at("src"), src_mask, at(mask, "src_key_padding_mask"))};
          }};
}

template <typename Holder>
std::pair<std::shared_ptr<nn::Module>, Forward> decoder(Holder m) {
  return {m.ptr(), [m](const Tensors& in, const Tensors& mask) mutable {
            return std::vector<Tensor>{m->forward(in.at("tgt"),
                                                  in.at("memory"),
                                                  at(mask, "tgt_mask"),
                                                  at(mask, "memory_mask"),
                                                  at(mask, "tgt_key_padding_mask"),
                                                  at(mask, "memory_key_padding_mask"))};
          }};
}

std::pair<std::shared_ptr<nn::Module>, Forward> transformer(nn::TransformerOptions o) {
  nn::Transformer m(o);
  return {m.ptr(), [m](const Tensors& in, const Tensors& mask) mutable {
            return std::vector<Tensor>{m->forward(in.at("src"),
                                                  in.at("tgt"),
                                                  at(mask, "src_mask"),
                                                  at(mask, "tgt_mask"),
                                                  at(mask, "memory_mask"),
                                                  at(mask, "src_key_padding_mask"),
                                                  at(mask, "tgt_key_padding_mask"),
                                                  at(mask, "memory_key_padding_mask"))};
          }};
}

std::vector<Case> cases() {
  using nn::AnyModule;
  using nn::LayerNorm;
  using nn::LayerNormOptions;
  return {
      {"mha_self", [] { return mha(mha_options()); }},
      {"mha_cross_kdim_vdim", [] { return mha(mha_options().kdim(5).vdim(6)); }},
      {"mha_batch_first", [] { return mha(mha_options().batch_first(true)); }},
      {"mha_key_padding_mask", [] { return mha(mha_options()); }},
      {"mha_bool_attn_mask_per_head",
       [] { return mha(mha_options(), true, /*average=*/false); }},
      {"mha_float_attn_mask_3d", [] { return mha(mha_options()); }},
      {"mha_causal", [] { return mha(mha_options()); }},
      {"mha_bias_kv_zero_attn",
       [] {
         return mha(mha_options().add_bias_kv(true).add_zero_attn(true),
                    true,
                    /*average=*/false);
       }},
      {"mha_no_bias", [] { return mha(mha_options().bias(false)); }},
      {"mha_key_is_value", [] { return mha(mha_options()); }},
      {"mha_unbatched", [] { return mha(mha_options()); }},
      {"mha_float_key_padding_mask", [] { return mha(mha_options().batch_first(true)); }},
      {"mha_no_weights", [] { return mha(mha_options(), /*need_weights=*/false); }},
      {"encoder_layer_relu",
       [] { return encoder(nn::TransformerEncoderLayer(encoder_options())); }},
      {"encoder_layer_gelu_norm_first_batch_first",
       [] {
         return encoder(nn::TransformerEncoderLayer(
             encoder_options().activation(kGELU).norm_first(true).batch_first(true)));
       }},
      {"encoder_stack_norm",
       [] {
         return encoder(nn::TransformerEncoder(
             nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(encoder_options()),
                                           2)
                 .norm(AnyModule(LayerNorm(LayerNormOptions({E}))))));
       }},
      {"encoder_stack_norm_first_gelu",
       [] {
         return encoder(nn::TransformerEncoder(nn::TransformerEncoderOptions(
             encoder_options().activation("gelu").norm_first(true), 2)));
       }},
      {"decoder_layer",
       [] { return decoder(nn::TransformerDecoderLayer(decoder_options())); }},
      {"decoder_layer_gelu_norm_first_batch_first",
       [] {
         return decoder(nn::TransformerDecoderLayer(
             decoder_options().activation(kGELU).norm_first(true).batch_first(true)));
       }},
      {"decoder_stack_norm",
       [] {
         return decoder(nn::TransformerDecoder(
             nn::TransformerDecoderOptions(decoder_options(), 2)
                 .norm(AnyModule(LayerNorm(LayerNormOptions({E}))))));
       }},
      {"transformer",
       [] {
         return transformer(
             nn::TransformerOptions(E, H, 2, 2).dim_feedforward(16).dropout(0.0));
       }},
      {"transformer_batch_first_norm_first_gelu",
       [] {
         return transformer(nn::TransformerOptions(E, H, 1, 2)
                                .dim_feedforward(16)
                                .dropout(0.0)
                                .activation(kGELU)
                                .batch_first(true)
                                .norm_first(true));
       }},
  };
}

// The golden tensors under `prefix`, keyed by the rest of their names.
Tensors with_prefix(const Golden& g, const std::string& prefix) {
  Tensors out;
  for (const auto& [key, value] : g) {
    if (key.rfind(prefix, 0) == 0) out[key.substr(prefix.size())] = value;
  }
  return out;
}

// The masks of a case: int64 0/1 as bool, float as they are, and causal
// ones (stored as where they are -inf) from generate_square_subsequent_mask.
Tensors masks_of(const Golden& g, const std::string& name, ScalarType dtype) {
  Tensors masks;
  const std::string suffix = ".isinf";
  for (const auto& [key, value] : with_prefix(g, name + ".mask.")) {
    if (key.size() > suffix.size() &&
        key.compare(key.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string mask_name = key.substr(0, key.size() - suffix.size());
      Tensor causal = nn::TransformerImpl::generate_square_subsequent_mask(value.size(0));
      EXPECT_EQ(causal.dtype(), kFloat32);
      EXPECT_TRUE(
          equal(eq(causal, -std::numeric_limits<double>::infinity()), ne(value, 0)))
          << mask_name;
      masks[mask_name] = causal.to(dtype);
    } else {
      masks[key] = value.dtype() == kInt64 ? ne(value, 0) : value;
    }
  }
  return masks;
}

class AttentionParity : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionParity, ResultsAndGradientsMatchPyTorch) {
  const std::string dtype_name = GetParam();
  const ScalarType dtype = parity::dtype_named(dtype_name);
  const Golden g = testing::load_golden("attention_" + dtype_name + ".txt");
  size_t cases_run = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name + " in " + dtype_name);
    ++cases_run;
    auto [module, forward] = c.make();
    module->to(dtype);
    const Tensors golden_params = with_prefix(g, c.name + ".param.");
    ASSERT_FALSE(golden_params.empty());
    EXPECT_EQ(module->named_parameters().keys().size(), golden_params.size());
    {
      NoGradGuard no_grad;
      for (auto& p : module->named_parameters()) {
        ASSERT_EQ(p.value().sizes(), golden_at(g, c.name + ".param." + p.key()).sizes())
            << p.key();
        p.value().copy_(golden_at(g, c.name + ".param." + p.key()));
      }
    }
    Tensors inputs;
    for (const auto& [x, value] : with_prefix(g, c.name + ".in.")) {
      inputs[x] = value.clone().requires_grad_();
    }
    const std::vector<Tensor> outs = forward(inputs, masks_of(g, c.name, dtype));
    Tensor loss = zeros({}, dtype);
    for (size_t k = 0; k < outs.size(); ++k) {
      const std::string at_k = c.name + ".out." + std::to_string(k);
      EXPECT_TRUE(matches(outs[k], golden_at(g, at_k))) << at_k;
      loss = loss + (outs[k] * golden_at(g, c.name + ".gout." + std::to_string(k))).sum();
    }
    EXPECT_FALSE(g.count(c.name + ".out." + std::to_string(outs.size())));
    loss.backward();
    for (const auto& [x, t] : inputs) {
      EXPECT_TRUE(matches(t.grad(), golden_at(g, c.name + ".grad.in." + x))) << x;
    }
    for (const auto& p : module->named_parameters()) {
      EXPECT_TRUE(
          matches(p.value().grad(), golden_at(g, c.name + ".grad.param." + p.key())))
          << p.key();
    }
  }
  // Every case PyTorch wrote is one the table runs.
  size_t golden_cases = 0;
  for (const auto& [key, value] : g) {
    golden_cases += key.size() > 6 && key.compare(key.size() - 6, 6, ".out.0") == 0;
  }
  EXPECT_EQ(golden_cases, cases_run);
}

INSTANTIATE_TEST_SUITE_P(Dtypes,
                         AttentionParity,
                         ::testing::Values("float32", "float64"));

}  // namespace
}  // namespace tandem
