// The op table's indexing rows (tandem/ops/indexing.h): index_select,
// gather, scatter_add (in place too), index_add and embedding along each
// dim, with repeated indices (the backward must add every one), an empty
// index, a padding index and large tables. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// The padding row changes the output but gets no gradient, by definition
// (as PyTorch's), so finite differences disagree with backward there.
constexpr Flags kPaddingRowHasNoGradient{
    .no_finite_differences = "padding_idx's row gets no gradient by definition"};

// Each also large, with indices that repeat many times.
std::vector<TwoSizes> repeated_index_rows() {
  return {
      {{"index_select",
        {F({5, 3}), I({4}, 5)},
        [](L in) { return index_select(in[0], 0, in[1]); }},
       {F({1000, 33}), I({517}, 1000)}},
      {{"scatter_add",
        {F({3, 5}), I({3, 4}, 5), F({3, 4})},
        [](L in) { return scatter_add(in[0], 1, in[1], in[2]); }},
       {F({8, 5}), I({8, 300}, 5), F({8, 300})}},
      {{"index_add",
        {F({5, 3}), I({4}, 5), F({4, 3})},
        [](L in) { return index_add(in[0], 0, in[1], in[2]); }},
       {F({10, 33}), I({1000}, 10), F({1000, 33})}},
      {{"embedding",
        {F({6, 3}), I({2, 4}, 6)},
        [](L in) { return embedding(in[0], in[1]); }},
       {F({1000, 64}), I({32, 40}, 1000)}},
  };
}

std::vector<OpCase> other_rows() {
  return {
      {"index_select_dim1_repeats",
       {F({33, 10}), I({300}, 10)},
       [](L in) { return index_select(in[0], 1, in[1]); }},
      {"index_select_empty_index",
       {F({5, 3}), I({0}, 5)},
       [](L in) { return index_select(in[0], 0, in[1]); }},
      {"gather",
       {F({30, 50}), I({30, 70}, 50)},
       [](L in) { return gather(in[0], 1, in[1]); }},
      {"gather_dim0_3d",
       {F({6, 5, 4}), I({9, 5, 4}, 6)},
       [](L in) { return gather(in[0], 0, in[1]); }},
      {"scatter_add_dim0",
       {F({4, 6}), I({50, 6}, 4), F({50, 6})},
       [](L in) { return scatter_add(in[0], 0, in[1], in[2]); }},
      {"scatter_add_inplace",
       {F({3, 5}), I({3, 4}, 5), F({3, 4})},
       [](L in) { return (in[0] * 1).scatter_add_(1, in[1], in[2]); }},
      {"index_add_dim1",
       {F({5, 6}), I({20}, 6), F({5, 20})},
       [](L in) { return index_add(in[0], 1, in[1], in[2]); }},
      {"embedding_small_vocab_padding",
       {F({10, 16}), I({64, 50}, 10)},
       [](L in) { return embedding(in[0], in[1], /*padding_idx=*/3); },
       kPaddingRowHasNoGradient},
  };
}

INSTANTIATE_TEST_SUITE_P(Indexing,
                         OpTable,
                         ::testing::ValuesIn(joined({at_two_sizes(repeated_index_rows()),
                                                     other_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
