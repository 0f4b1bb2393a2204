// The body of functional::multi_head_attention_forward, with the name its
// errors carry: the module's name when MultiheadAttention calls it.
#pragma once

#include <string>
#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/options/attention.h"

namespace tandem::nn::detail {

std::tuple<Tensor, Tensor> multi_head_attention(
    const std::string& op,
    const Tensor& query,
    const Tensor& key,
    const Tensor& value,
    const functional::MultiheadAttentionForwardFuncOptions& options);

}  // namespace tandem::nn::detail
