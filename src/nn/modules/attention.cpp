// MultiheadAttention: parameters under PyTorch's names, its initialisation,
// and the forward over nn/functional/attention.cpp.
#include "tandem/nn/modules/attention.h"

#include "nn/functional/attention_impl.h"
#include "tandem/core/error.h"
#include "tandem/nn/init.h"
#include "tandem/ops/factory.h"

namespace tandem::nn {

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options)
    : options(options) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const MultiheadAttentionOptions& o = options;
  const int64_t e = o.embed_dim();
  TANDEM_CHECK(e > 0 && o.num_heads() > 0,
               "MultiheadAttention: embed_dim and num_heads must be positive, got ",
               e,
               " and ",
               o.num_heads());
  TANDEM_CHECK(e % o.num_heads() == 0,
               "MultiheadAttention: embed_dim must be divisible by num_heads, got "
               "embed_dim ",
               e,
               " and num_heads ",
               o.num_heads());
  TANDEM_CHECK(o.kdim() > 0 && o.vdim() > 0,
               "MultiheadAttention: kdim and vdim must be positive, got ",
               o.kdim(),
               " and ",
               o.vdim());
  TANDEM_CHECK(o.dropout() >= 0 && o.dropout() <= 1,
               "MultiheadAttention: dropout must be a probability in [0, 1], got ",
               o.dropout());
  head_dim = e / o.num_heads();
  _qkv_same_embed_dim = o.kdim() == e && o.vdim() == e;
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * e, e}));
    q_proj_weight = k_proj_weight = v_proj_weight = Tensor();
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({e, e}));
    k_proj_weight = register_parameter("k_proj_weight", empty({e, o.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({e, o.vdim()}));
    in_proj_weight = Tensor();
  }
  in_proj_bias = o.bias() ? register_parameter("in_proj_bias", empty({3 * e})) : Tensor();
  if (o.add_bias_kv()) {
    bias_k = register_parameter("bias_k", empty({1, 1, e}));
    bias_v = register_parameter("bias_v", empty({1, 1, e}));
  } else {
    bias_k = bias_v = Tensor();
  }
  out_proj = register_module("out_proj", Linear(LinearOptions(e, e).bias(o.bias())));
  _reset_parameters();
}

void MultiheadAttentionImpl::_reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
  if (bias_k.defined()) init::xavier_normal_(bias_k);
  if (bias_v.defined()) init::xavier_normal_(bias_v);
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query,
                                                           const Tensor& key,
                                                           const Tensor& value,
                                                           const Tensor& key_padding_mask,
                                                           bool need_weights,
                                                           const Tensor& attn_mask,
                                                           bool average_attn_weights) {
  const MultiheadAttentionOptions& o = options;
  TANDEM_CHECK(query.defined() && key.defined() && value.defined(),
               "MultiheadAttention: query, key and value must be defined");
  const bool batched = query.dim() == 3;
  Tensor q = query, k = key, v = value;
  if (o.batch_first() && batched) {
    // Keeps which of them are one tensor, as PyTorch does: that picks the
    // projection (one product for self-attention).
    q = query.transpose(1, 0);
    k = key.is_same(query) ? q : key.transpose(1, 0);
    v = value.is_same(key) ? k : value.transpose(1, 0);
  }
  functional::MultiheadAttentionForwardFuncOptions f(o.embed_dim(),
                                                     o.num_heads(),
                                                     in_proj_weight,
                                                     in_proj_bias,
                                                     bias_k,
                                                     bias_v,
                                                     o.add_zero_attn(),
                                                     o.dropout(),
                                                     out_proj->weight,
                                                     out_proj->bias);
  f.training(is_training())
      .key_padding_mask(key_padding_mask)
      .need_weights(need_weights)
      .attn_mask(attn_mask)
      .average_attn_weights(average_attn_weights);
  if (!_qkv_same_embed_dim) {
    f.use_separate_proj_weight(true)
        .q_proj_weight(q_proj_weight)
        .k_proj_weight(k_proj_weight)
        .v_proj_weight(v_proj_weight);
  }
  auto [out, weights] = detail::multi_head_attention("MultiheadAttention", q, k, v, f);
  if (o.batch_first() && batched) out = out.transpose(1, 0);
  return {out, weights};
}

}  // namespace tandem::nn
