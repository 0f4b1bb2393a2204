// The op table's shape rows (tandem/ops/shape.h): views (view, narrow,
// select, transpose, permute, expand, squeeze and unsqueeze), the splits,
// and the copies that join (cat, stack) or lay out (contiguous, reshape of
// a transposed view), with transposed and empty parts.
// op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

std::vector<OpCase> rows() {
  return {
      {"view",
       {F({3, 4})},
       [](L in) {
         return in[0].view({2, 6}) * 1;
       }},
      {"reshape_transposed", {F({30, 40})}, [](L in) { return in[0].t().reshape({-1}); }},
      {"narrow", {F({4, 5})}, [](L in) { return narrow(in[0], 1, 1, 3); }},
      {"select", {F({4, 5})}, [](L in) { return select(in[0], 0, -2); }},
      {"narrow_select",
       {F({40, 50})},
       [](L in) { return narrow(in[0], 1, 7, 30).select(0, 3); },
       kTooLargeForFiniteDifferences},
      {"chunk_uneven", {F({4, 7})}, [](L in) { return chunk(in[0], 3, 1)[2]; }},
      {"split",
       {F({5, 3})},
       [](L in) { return split(in[0], 2, 0)[1] * split(in[0], 2, 0)[0]; }},
      {"split_sizes",
       {F({6, 2})},
       [](L in) {
         return split(in[0], IntList{1, 5}, 0)[1];
       }},
      {"transpose", {F({2, 3, 4})}, [](L in) { return transpose(in[0], 0, 2); }},
      {"t", {F({3, 4})}, [](L in) { return t(in[0]); }},
      {"permute",
       {F({6, 7, 8})},
       [](L in) {
         return permute(in[0], {2, 0, 1});
       }},
      {"unsqueeze", {F({3, 4})}, [](L in) { return unsqueeze(in[0], 1); }},
      {"squeeze", {F({3, 1, 4, 1})}, [](L in) { return squeeze(in[0]); }},
      {"squeeze_dim", {F({3, 1, 4})}, [](L in) { return squeeze(in[0], 1); }},
      {"squeeze_unsqueeze_flatten",
       {F({3, 1, 4, 1})},
       [](L in) { return flatten(unsqueeze(squeeze(in[0]), 0)); }},
      {"flatten", {F({2, 3, 4})}, [](L in) { return flatten(in[0], 1); }},
      {"expand",
       {F({3, 1})},
       [](L in) {
         return expand(in[0], {2, 3, 4});
       }},
      {"contiguous", {F({3, 4})}, [](L in) { return contiguous(in[0].t()); }},
      {"cat",
       {F({20, 3}), F({40, 3})},
       [](L in) {
         return cat({in[0], in[1]}, 0);
       }},
      {"cat_dim1",
       {F({2, 3}), F({2, 1}), F({2, 2})},
       [](L in) {
         return cat({in[0], in[1], in[2]}, -1);
       }},
      {"cat_last_dim_transposed",
       {F({3, 20}), F({20, 1}), F({20, 2})},
       [](L in) {
         return cat({in[0].t(), in[1], in[2]}, -1);
       }},
      {"cat_with_empty",
       {F({2, 3}), F({0, 3}), F({1, 3})},
       [](L in) {
         return cat({in[0], in[1], in[2]}, 0);
       }},
      {"stack",
       {F({2, 3}), F({2, 3})},
       [](L in) {
         return stack({in[0], in[1]}, 1);
       }},
      {"stack_dim2",
       {F({5, 3}), F({5, 3})},
       [](L in) {
         return stack({in[0], in[1]}, 2);
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Shape, OpTable, ::testing::ValuesIn(rows()), row_name);

}  // namespace
}  // namespace tandem::testing::op_table
