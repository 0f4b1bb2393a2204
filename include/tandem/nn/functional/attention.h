// functional::multi_head_attention_forward: scaled dot-product attention
// over several heads with input and output projections, as PyTorch's
// F.multi_head_attention_forward (1.13) and LibTorch's functional form.
// Inputs are [L, N, E] (seq first; [L, E] unbatched); masks are bool (true:
// may not attend) or float (added to the scores). Returns (output, weights);
// weights is undefined unless need_weights.
//
//   namespace F = tandem::nn::functional;
//   auto [out, weights] = F::multi_head_attention_forward(x, x, x,
//       F::MultiheadAttentionForwardFuncOptions(
//           /*embed_dim_to_check=*/8, /*num_heads=*/2, w_in, b_in, /*bias_k=*/{},
//           /*bias_v=*/{}, /*add_zero_attn=*/false, /*dropout_p=*/0.0, w_out, b_out)
//           .attn_mask(mask).training(false));
#pragma once

#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/options/attention.h"

namespace tandem::nn::functional {

std::tuple<Tensor, Tensor> multi_head_attention_forward(
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const MultiheadAttentionForwardFuncOptions& options);

}  // namespace tandem::nn::functional
