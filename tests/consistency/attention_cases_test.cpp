// The op table's attention rows (nn::functional::multi_head_attention_forward):
// the output, the weights and every input's gradient (inputs, projections,
// biases, float masks). Rows take the packed self-attention product under a
// causal bool mask and a key padding mask, separate projections (kdim,
// vdim) with bias_kv, add_zero_attn and a float 3-D mask, and a wider batch
// of heads. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

using nn::functional::multi_head_attention_forward;
using Options = nn::functional::MultiheadAttentionForwardFuncOptions;

Tensor flat(const std::tuple<Tensor, Tensor>& result) {
  return cat({std::get<0>(result).reshape({-1}), std::get<1>(result).reshape({-1})}, 0);
}

// [rows, cols] bool: true where col > row (a causal mask) on `device`.
Tensor above_diagonal(int64_t rows, int64_t cols, Device device) {
  const TensorOptions index = TensorOptions(kInt64).device(device);
  return gt(arange(cols, index).unsqueeze(0), arange(rows, index).unsqueeze(1));
}

// [batch, len] bool: the last `padded` keys of odd batch entries masked.
Tensor padding(int64_t batch, int64_t len, int64_t padded, Device device) {
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t s = 0; s < len; ++s) rows.push_back(b % 2 == 1 && s >= len - padded);
  }
  return ne(tensor(rows).reshape({batch, len}), 0).to(device);
}

std::vector<OpCase> rows() {
  return {
      {"self_attention_causal_padding",
       {F({5, 3, 8}), F({24, 8}), F({24}), F({8, 8}), F({8})},
       [](L in) {
         const Device d = in[0].device();
         return flat(multi_head_attention_forward(
             in[0],
             in[0],
             in[0],
             Options(8, 2, in[1], in[2], {}, {}, false, 0.0, in[3], in[4])
                 .attn_mask(above_diagonal(5, 5, d))
                 .key_padding_mask(padding(3, 5, 2, d))));
       }},
      {"separate_projections_bias_kv_zero_attn",
       {F({3, 2, 6}),
        F({4, 2, 5}),
        F({4, 2, 7}),
        F({6, 6}),
        F({6, 5}),
        F({6, 7}),
        F({18}),
        F({1, 1, 6}),
        F({1, 1, 6}),
        F({6, 6}),
        F({6}),
        F({6, 3, 4})},
       [](L in) {
         return flat(multi_head_attention_forward(
             in[0],
             in[1],
             in[2],
             Options(6, 3, {}, in[6], in[7], in[8], true, 0.0, in[9], in[10])
                 .use_separate_proj_weight(true)
                 .q_proj_weight(in[3])
                 .k_proj_weight(in[4])
                 .v_proj_weight(in[5])
                 .attn_mask(in[11])
                 .average_attn_weights(false)));
       }},
      // Weights scaled as xavier's would be (inputs are in [-2, 2]), so the
      // softmax is not saturated and float32 keeps its usual accuracy.
      {"many_heads",
       {F({16, 24, 64}), F({16, 24, 64}), F({192, 64}), F({192}), F({64, 64}), F({64})},
       [](L in) {
         return flat(multi_head_attention_forward(
             in[0],
             in[1],
             in[1],
             Options(
                 64, 8, in[2] * 0.125, in[3], {}, {}, false, 0.0, in[4] * 0.125, in[5])
                 .key_padding_mask(padding(24, 16, 5, in[0].device()))));
       },
       kTooLargeForFiniteDifferences},
  };
}

INSTANTIATE_TEST_SUITE_P(Attention, OpTable, ::testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace tandem::testing::op_table
