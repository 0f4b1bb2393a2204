// The op table's activation rows (tandem/ops/activation.h): each function
// small and at a size of several GPU blocks, 1M elements, transposed and
// expanded inputs, in-place forms and evaluation-mode dropout.
// op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Each also at [37, 129]: several GPU blocks with a ragged tail.
std::vector<TwoSizes> multi_block_rows() {
  return {
      {{"relu", {F({3, 4})}, [](L in) { return relu(in[0]); }}, {F({37, 129})}},
      {{"gelu", {F({3, 4})}, [](L in) { return gelu(in[0]); }}, {F({37, 129})}},
      {{"gelu_tanh", {F({3, 4})}, [](L in) { return gelu(in[0], "tanh"); }},
       {F({37, 129})}},
      {{"sigmoid", {F({3, 4})}, [](L in) { return sigmoid(in[0]); }}, {F({37, 129})}},
      {{"tanh", {F({3, 4})}, [](L in) { return tanh(in[0]); }}, {F({37, 129})}},
      {{"leaky_relu", {F({3, 4})}, [](L in) { return leaky_relu(in[0], 0.2); }},
       {F({37, 129})}},
      {{"elu", {F({3, 4})}, [](L in) { return elu(in[0], 0.7); }}, {F({37, 129})}},
      {{"selu", {F({3, 4})}, [](L in) { return selu(in[0]); }}, {F({37, 129})}},
      {{"silu", {F({3, 4})}, [](L in) { return silu(in[0]); }}, {F({37, 129})}},
      {{"softplus_beta_threshold",
        {F({3, 4})},
        [](L in) { return softplus(in[0], 2.0, 1.5); }},
       {F({37, 129})}},
      {{"hardtanh", {F({3, 4})}, [](L in) { return hardtanh(in[0], -0.7, 1.2); }},
       {F({37, 129})}},
      {{"softsign", {F({3, 4})}, [](L in) { return softsign(in[0]); }}, {F({37, 129})}},
  };
}

std::vector<OpCase> other_rows() {
  return {
      {"relu_million",
       {F({kMillion})},
       [](L in) { return relu(in[0]); },
       kTooLargeForFiniteDifferences},
      {"leaky_relu_million",
       {F({kMillion})},
       [](L in) { return leaky_relu(in[0]); },
       kTooLargeForFiniteDifferences},
      {"leaky_relu_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return leaky_relu_(y);
       }},
      {"elu_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return elu_(y);
       }},
      {"mish", {F({3, 4})}, [](L in) { return mish(in[0]); }},
      {"mish_transposed",
       {F({129, 37})},
       [](L in) { return mish(in[0].t()); },
       kTooLargeForFiniteDifferences},
      {"softplus", {F({3, 4})}, [](L in) { return softplus(in[0]); }},
      {"hardtanh_inplace",
       {F({8})},
       [](L in) {
         Tensor y = in[0] * 1;
         return hardtanh_(y);
       }},
      {"log_sigmoid", {F({3, 4})}, [](L in) { return log_sigmoid(in[0]); }},
      {"log_sigmoid_broadcast",
       {F({37, 1})},
       [](L in) {
         return log_sigmoid(in[0].expand({37, 129}));
       },
       kTooLargeForFiniteDifferences},
      {"prelu", {F({8, 16, 9}), F({16})}, [](L in) { return prelu(in[0], in[1]); }},
      {"prelu_shared", {F({4, 5}), F({1})}, [](L in) { return prelu(in[0], in[1]); }},
      {"dropout_eval", {F({3, 4})}, [](L in) { return dropout(in[0], 0.5, false); }},
  };
}

INSTANTIATE_TEST_SUITE_P(Activations,
                         OpTable,
                         ::testing::ValuesIn(joined({at_two_sizes(multi_block_rows()),
                                                     other_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
