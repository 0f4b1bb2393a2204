// Options for MultiheadAttention and functional::multi_head_attention_forward,
// with LibTorch's chainable setters and defaults. batch_first is PyTorch's
// (LibTorch 1.13 lacks it): inputs and output as [batch, seq, feature].
//
//   tandem::nn::MultiheadAttention mha(
//       tandem::nn::MultiheadAttentionOptions(64, 8).dropout(0.1).kdim(32).vdim(48));
//   namespace F = tandem::nn::functional;
//   auto [out, w] = F::multi_head_attention_forward(q, k, v,
//       F::MultiheadAttentionForwardFuncOptions(64, 8, w_in, b_in, {}, {}, false, 0.0,
//                                               w_out, b_out).training(false));
#pragma once

#include <cstdint>
#include <utility>

#include "tandem/core/tensor.h"

namespace tandem::nn {

class MultiheadAttentionOptions {
 public:
  /// kdim and vdim default to embed_dim.
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim),
        num_heads_(num_heads),
        kdim_(embed_dim),
        vdim_(embed_dim) {}

  MultiheadAttentionOptions& embed_dim(int64_t value) { return set(embed_dim_, value); }
  MultiheadAttentionOptions& num_heads(int64_t value) { return set(num_heads_, value); }
  /// Dropout probability on the attention weights while training (default 0).
  MultiheadAttentionOptions& dropout(double value) { return set(dropout_, value); }
  /// Whether the input and output projections learn biases (default true).
  MultiheadAttentionOptions& bias(bool value) { return set(bias_, value); }
  /// Learned bias_k and bias_v appended to the keys and values (default false).
  MultiheadAttentionOptions& add_bias_kv(bool value) { return set(add_bias_kv_, value); }
  /// A zero key and value appended after the projections (default false).
  MultiheadAttentionOptions& add_zero_attn(bool value) {
    return set(add_zero_attn_, value);
  }
  /// Feature sizes of key and value (default embed_dim).
  MultiheadAttentionOptions& kdim(int64_t value) { return set(kdim_, value); }
  MultiheadAttentionOptions& vdim(int64_t value) { return set(vdim_, value); }
  /// Batched inputs and output as [batch, seq, feature] (default false:
  /// [seq, batch, feature]); the weights are [batch, ...] either way.
  MultiheadAttentionOptions& batch_first(bool value) { return set(batch_first_, value); }

  int64_t embed_dim() const noexcept { return embed_dim_; }
  int64_t num_heads() const noexcept { return num_heads_; }
  double dropout() const noexcept { return dropout_; }
  bool bias() const noexcept { return bias_; }
  bool add_bias_kv() const noexcept { return add_bias_kv_; }
  bool add_zero_attn() const noexcept { return add_zero_attn_; }
  int64_t kdim() const noexcept { return kdim_; }
  int64_t vdim() const noexcept { return vdim_; }
  bool batch_first() const noexcept { return batch_first_; }

 private:
  template <typename T>
  MultiheadAttentionOptions& set(T& field, T value) {
    field = value;
    return *this;
  }

  int64_t embed_dim_;
  int64_t num_heads_;
  double dropout_ = 0.0;
  bool bias_ = true;
  bool add_bias_kv_ = false;
  bool add_zero_attn_ = false;
  int64_t kdim_;
  int64_t vdim_;
  bool batch_first_ = false;
};

namespace functional {

/// The arguments of multi_head_attention_forward after query, key and
/// value, as LibTorch's: the required ones in the constructor (undefined
/// tensors for absent ones), the rest by setters.
class MultiheadAttentionForwardFuncOptions {
 public:
  MultiheadAttentionForwardFuncOptions(int64_t embed_dim_to_check,
                                       int64_t num_heads,
                                       Tensor in_proj_weight,
                                       Tensor in_proj_bias,
                                       Tensor bias_k,
                                       Tensor bias_v,
                                       bool add_zero_attn,
                                       double dropout_p,
                                       Tensor out_proj_weight,
                                       Tensor out_proj_bias)
      : embed_dim_to_check_(embed_dim_to_check),
        num_heads_(num_heads),
        in_proj_weight_(std::move(in_proj_weight)),
        in_proj_bias_(std::move(in_proj_bias)),
        bias_k_(std::move(bias_k)),
        bias_v_(std::move(bias_v)),
        add_zero_attn_(add_zero_attn),
        dropout_p_(dropout_p),
        out_proj_weight_(std::move(out_proj_weight)),
        out_proj_bias_(std::move(out_proj_bias)) {}

  using Self = MultiheadAttentionForwardFuncOptions;
  Self& embed_dim_to_check(int64_t value) { return set(embed_dim_to_check_, value); }
  Self& num_heads(int64_t value) { return set(num_heads_, value); }
  Self& in_proj_weight(Tensor value) { return set(in_proj_weight_, std::move(value)); }
  Self& in_proj_bias(Tensor value) { return set(in_proj_bias_, std::move(value)); }
  Self& bias_k(Tensor value) { return set(bias_k_, std::move(value)); }
  Self& bias_v(Tensor value) { return set(bias_v_, std::move(value)); }
  Self& add_zero_attn(bool value) { return set(add_zero_attn_, value); }
  Self& dropout_p(double value) { return set(dropout_p_, value); }
  Self& out_proj_weight(Tensor value) { return set(out_proj_weight_, std::move(value)); }
  Self& out_proj_bias(Tensor value) { return set(out_proj_bias_, std::move(value)); }
  /// Dropout acts only when true (default true).
  Self& training(bool value) { return set(training_, value); }
  /// [N, S] (or [S] unbatched), bool (true: ignore that key) or float (added).
  Self& key_padding_mask(Tensor value) {
    return set(key_padding_mask_, std::move(value));
  }
  /// Whether to return the attention weights (default true).
  Self& need_weights(bool value) { return set(need_weights_, value); }
  /// [L, S] or [N * num_heads, L, S], bool (true: may not attend) or float (added).
  Self& attn_mask(Tensor value) { return set(attn_mask_, std::move(value)); }
  /// Project with q/k/v_proj_weight instead of in_proj_weight (default false).
  Self& use_separate_proj_weight(bool value) {
    return set(use_separate_proj_weight_, value);
  }
  Self& q_proj_weight(Tensor value) { return set(q_proj_weight_, std::move(value)); }
  Self& k_proj_weight(Tensor value) { return set(k_proj_weight_, std::move(value)); }
  Self& v_proj_weight(Tensor value) { return set(v_proj_weight_, std::move(value)); }
  /// Projected keys and values [N * num_heads, S, head_dim] used as they are.
  Self& static_k(Tensor value) { return set(static_k_, std::move(value)); }
  Self& static_v(Tensor value) { return set(static_v_, std::move(value)); }
  /// Weights averaged over the heads (default true) or per head.
  Self& average_attn_weights(bool value) { return set(average_attn_weights_, value); }

  int64_t embed_dim_to_check() const noexcept { return embed_dim_to_check_; }
  int64_t num_heads() const noexcept { return num_heads_; }
  const Tensor& in_proj_weight() const noexcept { return in_proj_weight_; }
  const Tensor& in_proj_bias() const noexcept { return in_proj_bias_; }
  const Tensor& bias_k() const noexcept { return bias_k_; }
  const Tensor& bias_v() const noexcept { return bias_v_; }
  bool add_zero_attn() const noexcept { return add_zero_attn_; }
  double dropout_p() const noexcept { return dropout_p_; }
  const Tensor& out_proj_weight() const noexcept { return out_proj_weight_; }
  const Tensor& out_proj_bias() const noexcept { return out_proj_bias_; }
  bool training() const noexcept { return training_; }
  const Tensor& key_padding_mask() const noexcept { return key_padding_mask_; }
  bool need_weights() const noexcept { return need_weights_; }
  const Tensor& attn_mask() const noexcept { return attn_mask_; }
  bool use_separate_proj_weight() const noexcept { return use_separate_proj_weight_; }
  const Tensor& q_proj_weight() const noexcept { return q_proj_weight_; }
  const Tensor& k_proj_weight() const noexcept { return k_proj_weight_; }
  const Tensor& v_proj_weight() const noexcept { return v_proj_weight_; }
  const Tensor& static_k() const noexcept { return static_k_; }
  const Tensor& static_v() const noexcept { return static_v_; }
  bool average_attn_weights() const noexcept { return average_attn_weights_; }

 private:
  template <typename T>
  Self& set(T& field, T value) {
    field = std::move(value);
    return *this;
  }

  int64_t embed_dim_to_check_;
  int64_t num_heads_;
  Tensor in_proj_weight_;
  Tensor in_proj_bias_;
  Tensor bias_k_;
  Tensor bias_v_;
  bool add_zero_attn_;
  double dropout_p_;
  Tensor out_proj_weight_;
  Tensor out_proj_bias_;
  bool training_ = true;
  Tensor key_padding_mask_;
  bool need_weights_ = true;
  Tensor attn_mask_;
  bool use_separate_proj_weight_ = false;
  Tensor q_proj_weight_;
  Tensor k_proj_weight_;
  Tensor v_proj_weight_;
  Tensor static_k_;
  Tensor static_v_;
  bool average_attn_weights_ = true;
};

}  // namespace functional
}  // namespace tandem::nn
