// multi_head_attention_forward, composed of differentiable ops (linear,
// bmm, softmax, dropout, cat, where) in the order PyTorch 1.13's
// F.multi_head_attention_forward takes them, so the results agree to
// rounding.
#include "tandem/nn/functional/attention.h"

#include <cmath>
#include <limits>
#include <string>

#include "nn/functional/attention_impl.h"
#include "tandem/core/error.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/shape.h"

namespace tandem::nn {
namespace detail {
namespace {

using Options = functional::MultiheadAttentionForwardFuncOptions;

// Note [Attention masks as floats]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// PyTorch merges a bool key_padding_mask into the attn_mask with logical_or
// (or masked_fill for a float attn_mask) and then turns the bool result into
// 0 / -inf. Turning each mask into 0 / -inf first and adding them gives the
// same scores: -inf plus anything finite is -inf, and the softmax's gradient
// is zero where its output is. Padding a mask with a zero column (bias_kv,
// add_zero_attn) is then the same for both kinds.
Tensor as_float_mask(const std::string& op,
                     const char* what,
                     const Tensor& mask,
                     ScalarType dtype) {
  // A uint8 attn_mask is PyTorch's deprecated bool; a uint8
  // key_padding_mask is an error there, and here.
  const bool byte_as_bool = mask.dtype() == kByte && std::string(what) == "attn_mask";
  if (mask.dtype() == kBool || byte_as_bool) {
    const Tensor blocked = mask.dtype() == kBool ? mask : ne(mask, 0);
    return where(
        blocked,
        full({}, -std::numeric_limits<double>::infinity(), mask.options().dtype(dtype)),
        zeros({}, mask.options().dtype(dtype)));
  }
  TANDEM_CHECK(mask.is_floating_point(),
               op,
               ": only bool and floating types of ",
               what,
               " are supported, got ",
               mask.dtype());
  return mask.dtype() == dtype ? mask : mask.to(dtype);
}

// One zero column appended to a mask's last dim (PyTorch's pad(mask, (0, 1))).
Tensor pad_one(const Tensor& mask) {
  if (!mask.defined()) return mask;
  IntList sizes = mask.sizes();
  sizes.back() = 1;
  return cat({mask, zeros(sizes, mask.options())}, -1);
}

void check_dims(const std::string& op,
                const Tensor& query,
                const Tensor& key,
                const Tensor& value,
                const Options& o) {
  TANDEM_CHECK(query.dim() == 2 || query.dim() == 3,
               op,
               ": query should be unbatched 2-D or batched 3-D, got shape ",
               query.sizes());
  const bool batched = query.dim() == 3;
  const char* kind = batched ? "batched (3-D)" : "unbatched (2-D)";
  TANDEM_CHECK(key.dim() == query.dim() && value.dim() == query.dim(),
               op,
               ": for ",
               kind,
               " query, expected key and value to be ",
               query.dim(),
               "-D, got shapes ",
               key.sizes(),
               " and ",
               value.sizes());
  const Tensor& kpm = o.key_padding_mask();
  TANDEM_CHECK(!kpm.defined() || kpm.dim() == query.dim() - 1,
               op,
               ": for ",
               kind,
               " query, expected key_padding_mask to be ",
               query.dim() - 1,
               "-D, got shape ",
               kpm.sizes());
  const Tensor& mask = o.attn_mask();
  TANDEM_CHECK(!mask.defined() || mask.dim() == 2 || mask.dim() == 3,
               op,
               ": expected attn_mask to be 2-D or 3-D, got shape ",
               mask.sizes());
  if (!batched && mask.defined() && mask.dim() == 3) {
    const IntList want{o.num_heads(), query.size(0), key.size(0)};
    TANDEM_CHECK(mask.sizes() == want,
                 op,
                 ": expected the 3-D attn_mask of unbatched inputs to have shape ",
                 want,
                 ", got ",
                 mask.sizes());
  }
}

struct Projected {
  Tensor q, k, v;
};

// PyTorch's _in_projection_packed: one product for self-attention, two
// when key is value, three otherwise.
Projected project_packed(const std::string& op,
                         const Tensor& query,
                         const Tensor& key,
                         const Tensor& value,
                         const Tensor& w,
                         const Tensor& b) {
  TANDEM_CHECK(w.defined(),
               op,
               ": use_separate_proj_weight is false but in_proj_weight is undefined");
  const int64_t e = query.size(-1);
  TANDEM_CHECK(w.dim() == 2 && w.size(0) == 3 * e && w.size(1) == e,
               op,
               ": expected in_proj_weight of shape ",
               IntList{3 * e, e},
               ", got ",
               w.sizes());
  TANDEM_CHECK(key.size(-1) == e,
               op,
               ": key has ",
               key.size(-1),
               " features but in_proj_weight expects ",
               e,
               " (set kdim and vdim for other sizes)");
  if (key.is_same(value)) {
    if (query.is_same(key)) {
      std::vector<Tensor> qkv = linear(query, w, b).chunk(3, -1);
      return {qkv[0], qkv[1], qkv[2]};
    }
    std::vector<Tensor> ws = w.split(IntList{e, 2 * e});
    std::vector<Tensor> bs = b.defined() ? b.split(IntList{e, 2 * e})
                                         : std::vector<Tensor>{Tensor(), Tensor()};
    std::vector<Tensor> kv = linear(key, ws[1], bs[1]).chunk(2, -1);
    return {linear(query, ws[0], bs[0]), kv[0], kv[1]};
  }
  std::vector<Tensor> ws = w.chunk(3);
  std::vector<Tensor> bs =
      b.defined() ? b.chunk(3) : std::vector<Tensor>{Tensor(), Tensor(), Tensor()};
  return {linear(query, ws[0], bs[0]),
          linear(key, ws[1], bs[1]),
          linear(value, ws[2], bs[2])};
}

// PyTorch's _in_projection: separate weights, for kdim / vdim != embed_dim.
Projected project_separate(const std::string& op,
                           const Tensor& query,
                           const Tensor& key,
                           const Tensor& value,
                           const Options& o) {
  const Tensor* weights[] = {&o.q_proj_weight(), &o.k_proj_weight(), &o.v_proj_weight()};
  const Tensor* inputs[] = {&query, &key, &value};
  const char* names[] = {"q_proj_weight", "k_proj_weight", "v_proj_weight"};
  const char* input_names[] = {"query", "key", "value"};
  const int64_t e = query.size(-1);
  for (int i = 0; i < 3; ++i) {
    TANDEM_CHECK(weights[i]->defined(),
                 op,
                 ": use_separate_proj_weight is true but ",
                 names[i],
                 " is undefined");
    const IntList want{e, inputs[i]->size(-1)};
    TANDEM_CHECK(weights[i]->sizes() == want,
                 op,
                 ": expected ",
                 names[i],
                 " of shape ",
                 want,
                 " for ",
                 input_names[i],
                 " of shape ",
                 inputs[i]->sizes(),
                 ", got ",
                 weights[i]->sizes());
  }
  std::vector<Tensor> bs = o.in_proj_bias().defined()
                               ? o.in_proj_bias().chunk(3)
                               : std::vector<Tensor>{Tensor(), Tensor(), Tensor()};
  return {linear(query, o.q_proj_weight(), bs[0]),
          linear(key, o.k_proj_weight(), bs[1]),
          linear(value, o.v_proj_weight(), bs[2])};
}

// A projected key or value [S, N, E] as [N * heads, S, head_dim], or the
// static one given instead.
Tensor split_heads(const std::string& op,
                   const char* static_name,
                   const Tensor& projected,
                   const Tensor& static_value,
                   int64_t batch_heads,
                   int64_t head_dim) {
  if (!static_value.defined()) {
    return projected.contiguous()
        .view({projected.size(0), batch_heads, head_dim})
        .transpose(0, 1);
  }
  TANDEM_CHECK(static_value.dim() == 3 && static_value.size(0) == batch_heads &&
                   static_value.size(2) == head_dim,
               op,
               ": expected ",
               static_name,
               " of shape [",
               batch_heads,
               ", S, ",
               head_dim,
               "], got ",
               static_value.sizes());
  return static_value;
}

}  // namespace

std::tuple<Tensor, Tensor> multi_head_attention(const std::string& op,
                                                const Tensor& query_in,
                                                const Tensor& key_in,
                                                const Tensor& value_in,
                                                const Options& o) {
  TANDEM_CHECK(query_in.defined() && key_in.defined() && value_in.defined(),
               op,
               ": query, key and value must be defined");
  check_dims(op, query_in, key_in, value_in, o);
  const bool batched = query_in.dim() == 3;
  Tensor query = query_in, key = key_in, value = value_in;
  Tensor key_padding_mask = o.key_padding_mask();
  if (!batched) {
    // Keeps which of them are one tensor, which picks the projection.
    query = query_in.unsqueeze(1);
    key = key_in.is_same(query_in) ? query : key_in.unsqueeze(1);
    value = value_in.is_same(key_in) ? key : value_in.unsqueeze(1);
    if (key_padding_mask.defined()) key_padding_mask = key_padding_mask.unsqueeze(0);
  }
  const int64_t tgt_len = query.size(0), bsz = query.size(1), embed_dim = query.size(2);
  const int64_t heads = o.num_heads();
  TANDEM_CHECK(embed_dim == o.embed_dim_to_check(),
               op,
               ": was expecting embedding dimension of ",
               o.embed_dim_to_check(),
               ", got query of shape ",
               query_in.sizes());
  TANDEM_CHECK(heads > 0 && embed_dim % heads == 0,
               op,
               ": embed_dim ",
               embed_dim,
               " not divisible by num_heads ",
               heads);
  const int64_t head_dim = embed_dim / heads;
  TANDEM_CHECK(
      key.size(0) == value.size(0) && key.size(1) == value.size(1) && key.size(1) == bsz,
      op,
      ": key ",
      key_in.sizes(),
      " and value ",
      value_in.sizes(),
      " must share sequence and batch sizes with each other and the batch "
      "size of query ",
      query_in.sizes());
  TANDEM_CHECK(o.use_separate_proj_weight() || key.sizes() == value.sizes(),
               op,
               ": key shape ",
               key_in.sizes(),
               " does not match value shape ",
               value_in.sizes());

  Projected p =
      o.use_separate_proj_weight()
          ? project_separate(op, query, key, value, o)
          : project_packed(op, query, key, value, o.in_proj_weight(), o.in_proj_bias());
  Tensor q = p.q, k = p.k, v = p.v;
  const ScalarType dtype = q.dtype();

  // ---- masks, as 0 / -inf (Note [Attention masks as floats]) ----
  const int64_t src_len_in = key.size(0);
  Tensor attn_mask;
  if (o.attn_mask().defined()) {
    attn_mask = as_float_mask(op, "attn_mask", o.attn_mask(), dtype);
    if (attn_mask.dim() == 2) {
      const IntList want{tgt_len, src_len_in};
      TANDEM_CHECK(attn_mask.sizes() == want,
                   op,
                   ": the shape of the 2-D attn_mask is ",
                   attn_mask.sizes(),
                   ", but should be ",
                   want);
      attn_mask = attn_mask.unsqueeze(0);
    } else {
      const IntList want{bsz * heads, tgt_len, src_len_in};
      TANDEM_CHECK(attn_mask.sizes() == want,
                   op,
                   ": the shape of the 3-D attn_mask is ",
                   attn_mask.sizes(),
                   ", but should be ",
                   want);
    }
  }
  if (key_padding_mask.defined()) {
    key_padding_mask = as_float_mask(op, "key_padding_mask", key_padding_mask, dtype);
  }

  if (o.bias_k().defined() || o.bias_v().defined()) {
    TANDEM_CHECK(o.bias_k().defined() && o.bias_v().defined(),
                 op,
                 ": bias_k and bias_v must be given together");
    TANDEM_CHECK(!o.static_k().defined() && !o.static_v().defined(),
                 op,
                 ": bias_k and bias_v cannot be added to a static key or value");
    TANDEM_CHECK(o.bias_k().numel() == embed_dim && o.bias_v().numel() == embed_dim,
                 op,
                 ": expected bias_k and bias_v of shape [1, 1, ",
                 embed_dim,
                 "], got ",
                 o.bias_k().sizes(),
                 " and ",
                 o.bias_v().sizes());
    k = cat({k, o.bias_k().reshape({1, 1, embed_dim}).expand({1, bsz, embed_dim})});
    v = cat({v, o.bias_v().reshape({1, 1, embed_dim}).expand({1, bsz, embed_dim})});
    attn_mask = pad_one(attn_mask);
    key_padding_mask = pad_one(key_padding_mask);
  }

  // ---- heads into the batch: [N * heads, len, head_dim] ----
  q = q.contiguous().view({tgt_len, bsz * heads, head_dim}).transpose(0, 1);
  k = split_heads(op, "static_k", k, o.static_k(), bsz * heads, head_dim);
  v = split_heads(op, "static_v", v, o.static_v(), bsz * heads, head_dim);
  if (o.add_zero_attn()) {
    k = cat({k, zeros({bsz * heads, 1, head_dim}, k.options())}, 1);
    v = cat({v, zeros({bsz * heads, 1, head_dim}, v.options())}, 1);
    attn_mask = pad_one(attn_mask);
    key_padding_mask = pad_one(key_padding_mask);
  }
  const int64_t src_len = k.size(1);
  TANDEM_CHECK(v.size(1) == src_len,
               op,
               ": keys and values differ in length (",
               src_len,
               " and ",
               v.size(1),
               ")");
  if (key_padding_mask.defined()) {
    const IntList want{bsz, src_len};
    TANDEM_CHECK(key_padding_mask.sizes() == want,
                 op,
                 ": expected key_padding_mask of shape ",
                 batched ? want : IntList{src_len},
                 ", got ",
                 o.key_padding_mask().sizes());
    Tensor per_head = key_padding_mask.view({bsz, 1, 1, src_len})
                          .expand({bsz, heads, 1, src_len})
                          .reshape({bsz * heads, 1, src_len});
    attn_mask = attn_mask.defined() ? attn_mask + per_head : per_head;
  }

  // ---- attention ----
  const double dropout_p = o.training() ? o.dropout_p() : 0.0;
  const Tensor q_scaled = q / std::sqrt(static_cast<double>(head_dim));
  Tensor weights = bmm(q_scaled, k.transpose(-2, -1));
  if (attn_mask.defined()) weights = weights + attn_mask;
  weights = softmax(weights, -1);
  if (dropout_p > 0.0) weights = dropout(weights, dropout_p, /*train=*/true);
  Tensor out =
      bmm(weights, v).transpose(0, 1).contiguous().view({tgt_len * bsz, embed_dim});
  out = linear(out, o.out_proj_weight(), o.out_proj_bias());
  out = out.view({tgt_len, bsz, out.size(1)});
  if (!batched) out = out.squeeze(1);
  if (!o.need_weights()) return {out, Tensor()};
  weights = weights.view({bsz, heads, tgt_len, src_len});
  if (o.average_attn_weights()) weights = weights.sum(1) / static_cast<double>(heads);
  if (!batched) weights = weights.squeeze(0);
  return {out, weights};
}

}  // namespace detail

namespace functional {

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options) {
  return detail::multi_head_attention(
      "multi_head_attention_forward", query, key, value, options);
}

}  // namespace functional
}  // namespace tandem::nn
