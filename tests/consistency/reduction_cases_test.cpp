// The op table's softmax and reduction rows (tandem/ops/activation.h,
// tandem/ops/reduction.h): every dim of 2-D and 3-D inputs, rows wider
// than a block (4097), long columns, one column, no rows, transposed input,
// large logits, empty and one-element sums and 1M elements (positive, so
// the result is not a cancellation that float32 cannot resolve).
// op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

std::vector<OpCase> softmax_rows() {
  return {
      {"softmax", {F({3, 5})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_4097_wide",
       {F({64, 4097})},
       [](L in) { return softmax(in[0], 1); },
       kTooLargeForFiniteDifferences},
      {"softmax_dim0", {F({4, 3})}, [](L in) { return softmax(in[0], 0); }},
      {"softmax_dim0_long",
       {F({4097, 3})},
       [](L in) { return softmax(in[0], 0); },
       kTooLargeForFiniteDifferences},
      {"softmax_3d_middle", {F({4, 33, 5})}, [](L in) { return softmax(in[0], -2); }},
      {"softmax_3d_first", {F({5, 4, 3})}, [](L in) { return softmax(in[0], 0); }},
      {"softmax_one_column", {F({7, 1})}, [](L in) { return softmax(in[0], 1); }},
      {"softmax_no_rows", {F({0, 5})}, [](L in) { return softmax(in[0], 1); }, kEmpty},
      {"softmax_transposed", {F({9, 17})}, [](L in) { return softmax(in[0].t(), 1); }},
      {"softmax_large_logits",
       {F({16, 1000})},
       [](L in) { return softmax(in[0] * 50, 1); },
       kTooLargeForFiniteDifferences},
      {"log_softmax", {F({3, 5})}, [](L in) { return log_softmax(in[0], -1); }},
      {"log_softmax_4097_wide",
       {F({64, 4097})},
       [](L in) { return log_softmax(in[0], -1); },
       kTooLargeForFiniteDifferences},
      {"log_softmax_dim0", {F({33, 17})}, [](L in) { return log_softmax(in[0], 0); }},
      {"log_softmax_3d_last",
       {F({3, 4, 1500})},
       [](L in) { return log_softmax(in[0], 2); },
       kTooLargeForFiniteDifferences},
      {"log_softmax_large_logits",
       {F({16, 1000})},
       [](L in) { return log_softmax(in[0] * 50, 1); },
       kTooLargeForFiniteDifferences},
  };
}

// Each also at a size of several GPU blocks.
std::vector<TwoSizes> multi_block_rows() {
  return {
      {{"sum", {F({3, 4})}, [](L in) { return sum(in[0]); }}, {F({37, 129})}},
      {{"sum_dims_keepdim",
        {F({2, 3, 4})},
        [](L in) {
          return sum(in[0], {0, 2}, true);
        }},
       {F({13, 257, 9})}},
      {{"mean_dim", {F({3, 4})}, [](L in) { return mean(in[0], {0}); }}, {F({37, 129})}},
      {{"max_all", {F({3, 4})}, [](L in) { return max(in[0]); }}, {F({37, 129})}},
      {{"min_all", {F({3, 4})}, [](L in) { return min(in[0]); }}, {F({37, 129})}},
  };
}

std::vector<OpCase> reduction_rows() {
  return {
      {"sum_all_million",
       {P({kMillion})},
       [](L in) { return sum(in[0]); },
       kTooLargeForFiniteDifferences},
      {"sum_all_transposed",
       {F({129, 37})},
       [](L in) { return sum(in[0].t()); },
       kTooLargeForFiniteDifferences},
      {"sum_empty", {F({0, 4})}, [](L in) { return sum(in[0]); }, kEmpty},
      {"sum_one_element", {F({1})}, [](L in) { return sum(in[0]); }},
      {"sum_dim", {F({3, 4})}, [](L in) { return sum(in[0], {1}); }},
      {"sum_dim0_tall",
       {F({4096, 256})},
       [](L in) { return sum(in[0], {0}); },
       kTooLargeForFiniteDifferences},
      {"sum_dim1_wide",
       {F({256, 4096})},
       [](L in) { return sum(in[0], {1}); },
       kTooLargeForFiniteDifferences},
      {"sum_middle_dim",
       {F({13, 257, 9})},
       [](L in) { return sum(in[0], {1}); },
       kTooLargeForFiniteDifferences},
      {"sum_dim_of_empty", {F({0, 4})}, [](L in) { return sum(in[0], {0}); }, kEmpty},
      {"mean", {F({3, 4})}, [](L in) { return mean(in[0]); }},
      {"mean_all_million",
       {P({kMillion})},
       [](L in) { return mean(in[0]); },
       kTooLargeForFiniteDifferences},
      {"mean_dims_keepdim",
       {F({6, 7, 8})},
       [](L in) {
         return mean(in[0], {-1, 1}, true);
       }},
      {"max_all_million",
       {F({kMillion})},
       [](L in) { return max(in[0]); },
       kTooLargeForFiniteDifferences},
      {"max_dim", {F({3, 4})}, [](L in) { return std::get<0>(max(in[0], 1)); }},
      {"max_dim_wide",
       {F({64, 4097})},
       [](L in) { return std::get<0>(max(in[0], 1)); },
       kTooLargeForFiniteDifferences},
      {"max_dim0",
       {F({1000, 33})},
       [](L in) { return std::get<0>(max(in[0], 0)); },
       kTooLargeForFiniteDifferences},
      {"min_dim_keepdim",
       {F({5, 6, 7})},
       [](L in) { return std::get<0>(min(in[0], 1, true)); }},
  };
}

INSTANTIATE_TEST_SUITE_P(SoftmaxAndReductions,
                         OpTable,
                         ::testing::ValuesIn(joined({softmax_rows(),
                                                     at_two_sizes(multi_block_rows()),
                                                     reduction_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
