// MultiheadAttention, as LibTorch's torch::nn::MultiheadAttention with
// PyTorch 1.13's batch_first: parameters in_proj_weight [3E, E] (or
// q_proj_weight, k_proj_weight, v_proj_weight when kdim or vdim differ from
// embed_dim), in_proj_bias [3E], bias_k and bias_v [1, 1, E] with
// add_bias_kv, and the submodule out_proj (Linear E -> E). Initialised as
// PyTorch does: projections xavier_uniform_, biases zero, bias_k and bias_v
// xavier_normal_, out_proj.weight as any Linear.
//
//   tandem::nn::MultiheadAttention mha(
//       tandem::nn::MultiheadAttentionOptions(16, 4).batch_first(true));
//   auto [out, weights] = mha->forward(x, x, x);        // x: [N, L, 16]
//   // out [N, L, 16], weights [N, L, L] (averaged over the 4 heads)
//   auto [o2, w2] = mha->forward(q, k, v, /*key_padding_mask=*/pad,
//                                /*need_weights=*/true, /*attn_mask=*/causal,
//                                /*average_attn_weights=*/false);  // w2 [N, 4, L, S]
#pragma once

#include <cstdint>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/linear.h"
#include "tandem/nn/options/attention.h"

namespace tandem::nn {

class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  /// Creates the parameters and out_proj and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's _reset_parameters).
  void _reset_parameters();
  /// query [L, N, E] ([N, L, E] with batch_first, [L, E] unbatched), key
  /// [S, N, kdim], value [S, N, vdim]. key_padding_mask [N, S] ([S]);
  /// attn_mask [L, S] or [N * num_heads, L, S]; both bool (true: may not
  /// attend) or float (added to the scores). Returns (output like query,
  /// weights [N, L, S], or [N, num_heads, L, S] unless average_attn_weights;
  /// undefined unless need_weights).
  std::tuple<Tensor, Tensor> forward(const Tensor& query,
                                     const Tensor& key,
                                     const Tensor& value,
                                     const Tensor& key_padding_mask = {},
                                     bool need_weights = true,
                                     const Tensor& attn_mask = {},
                                     bool average_attn_weights = true);

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim = true;
  int64_t head_dim = 0;
  Linear out_proj{nullptr};
  /// Undefined unless _qkv_same_embed_dim.
  Tensor in_proj_weight;
  /// Undefined without bias.
  Tensor in_proj_bias;
  /// Undefined without add_bias_kv.
  Tensor bias_k;
  Tensor bias_v;
  /// Undefined when _qkv_same_embed_dim.
  Tensor q_proj_weight;
  Tensor k_proj_weight;
  Tensor v_proj_weight;
};
TANDEM_MODULE(MultiheadAttention);

}  // namespace tandem::nn
