// TransformerEncoderLayer and TransformerDecoderLayer (PyTorch 1.13's
// forward, post-LN or pre-LN) and TransformerActivation.
#include "tandem/nn/modules/transformer_layer.h"

#include <string>

#include "tandem/core/error.h"
#include "tandem/ops/activation.h"

namespace tandem::nn {

// ---- TransformerActivation ----

TransformerActivation::TransformerActivation(Nonlinearity nonlinearity) {
  TANDEM_CHECK(nonlinearity == kReLU,
               "TransformerActivation: the activation must be kReLU, kGELU or a "
               "function, got another Nonlinearity");
}

TransformerActivation::TransformerActivation(const std::string& name) {
  TANDEM_CHECK(name == "relu" || name == "gelu",
               "TransformerActivation: activation should be relu/gelu, not ",
               name);
  kind_ = name == "relu" ? Kind::ReLU : Kind::GELU;
}

Tensor TransformerActivation::operator()(const Tensor& x) const {
  switch (kind_) {
    case Kind::ReLU:
      return relu(x);
    case Kind::GELU:
      return gelu(x);
    case Kind::Function:
      break;
  }
  TANDEM_CHECK(function_ != nullptr, "TransformerActivation: the function is empty");
  return function_(x);
}

std::string TransformerActivation::name() const {
  switch (kind_) {
    case Kind::ReLU:
      return "relu";
    case Kind::GELU:
      return "gelu";
    case Kind::Function:
      break;
  }
  return "function";
}

namespace {

template <typename Options>
void check_options(const char* module, const Options& o) {
  TANDEM_CHECK(o.d_model() > 0 && o.nhead() > 0 && o.dim_feedforward() > 0,
               module,
               ": d_model, nhead and dim_feedforward must be positive, got ",
               o.d_model(),
               ", ",
               o.nhead(),
               " and ",
               o.dim_feedforward());
  TANDEM_CHECK(o.d_model() % o.nhead() == 0,
               module,
               ": d_model must be divisible by nhead, got d_model ",
               o.d_model(),
               " and nhead ",
               o.nhead());
}

// A layer's input: [L, N, d_model] or [L, d_model].
void check_input(const char* module, const char* what, const Tensor& t, int64_t d_model) {
  TANDEM_CHECK(t.defined(), module, ": ", what, " must be defined");
  TANDEM_CHECK((t.dim() == 2 || t.dim() == 3) && t.size(-1) == d_model,
               module,
               ": expected ",
               what,
               " of 2 or 3 dims with d_model=",
               d_model,
               " features (last dim), got shape ",
               t.sizes());
}

MultiheadAttentionOptions attention_options(int64_t d_model,
                                            int64_t nhead,
                                            double dropout,
                                            bool batch_first) {
  return MultiheadAttentionOptions(d_model, nhead)
      .dropout(dropout)
      .batch_first(batch_first);
}

}  // namespace

// ---- TransformerEncoderLayer ----

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(
    const TransformerEncoderLayerOptions& options)
    : options(options) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const auto& o = options;
  check_options("TransformerEncoderLayer", o);
  const LayerNormOptions norm = LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
  self_attn = register_module("self_attn",
                              MultiheadAttention(attention_options(
                                  o.d_model(), o.nhead(), o.dropout(), o.batch_first())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src,
                                            const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  check_input("TransformerEncoderLayer", "src", src, options.d_model());
  auto self_attention = [&](const Tensor& x) {
    Tensor a = std::get<0>(self_attn->forward(
        x, x, x, src_key_padding_mask, /*need_weights=*/false, src_mask));
    return dropout1->forward(a);
  };
  auto feed_forward = [&](const Tensor& x) {
    Tensor h = dropout->forward(options.activation()(linear1->forward(x)));
    return dropout2->forward(linear2->forward(h));
  };
  Tensor x = src;
  if (options.norm_first()) {
    x = x + self_attention(norm1->forward(x));
    return x + feed_forward(norm2->forward(x));
  }
  x = norm1->forward(x + self_attention(x));
  return norm2->forward(x + feed_forward(x));
}

// ---- TransformerDecoderLayer ----

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(
    const TransformerDecoderLayerOptions& options)
    : options(options) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const auto& o = options;
  check_options("TransformerDecoderLayer", o);
  const LayerNormOptions norm = LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps());
  const auto attention =
      attention_options(o.d_model(), o.nhead(), o.dropout(), o.batch_first());
  self_attn = register_module("self_attn", MultiheadAttention(attention));
  multihead_attn = register_module("multihead_attn", MultiheadAttention(attention));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(norm));
  norm2 = register_module("norm2", LayerNorm(norm));
  norm3 = register_module("norm3", LayerNorm(norm));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  multihead_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt,
                                            const Tensor& memory,
                                            const Tensor& tgt_mask,
                                            const Tensor& memory_mask,
                                            const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  check_input("TransformerDecoderLayer", "tgt", tgt, options.d_model());
  check_input("TransformerDecoderLayer", "memory", memory, options.d_model());
  auto self_attention = [&](const Tensor& x) {
    Tensor a = std::get<0>(self_attn->forward(
        x, x, x, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask));
    return dropout1->forward(a);
  };
  auto memory_attention = [&](const Tensor& x) {
    Tensor a = std::get<0>(multihead_attn->forward(
        x, memory, memory, memory_key_padding_mask, /*need_weights=*/false, memory_mask));
    return dropout2->forward(a);
  };
  auto feed_forward = [&](const Tensor& x) {
    Tensor h = dropout->forward(options.activation()(linear1->forward(x)));
    return dropout3->forward(linear2->forward(h));
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + self_attention(norm1->forward(x));
    x = x + memory_attention(norm2->forward(x));
    return x + feed_forward(norm3->forward(x));
  }
  x = norm1->forward(x + self_attention(x));
  x = norm2->forward(x + memory_attention(x));
  return norm3->forward(x + feed_forward(x));
}

}  // namespace tandem::nn
