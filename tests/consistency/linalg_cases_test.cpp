// The op table's matrix-product rows (tandem/ops/linalg.h): mm, bmm,
// matmul's every rank pairing and linear, small and at sizes of many BLAS
// tiles, with transposed and narrowed operands, an empty inner or outer
// dim, 1x1 and a long inner dim. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Each also at a size of many tiles.
std::vector<TwoSizes> many_tile_rows() {
  return {
      {{"mm", {F({3, 4}), F({4, 2})}, [](L in) { return mm(in[0], in[1]); }},
       {F({129, 257}), F({257, 65})}},
      {{"mm_transposed",
        {F({4, 3}), F({2, 4})},
        [](L in) { return mm(in[0].t(), in[1].t()); }},
       {F({257, 129}), F({65, 257})}},
      {{"bmm", {F({2, 3, 4}), F({2, 4, 5})}, [](L in) { return bmm(in[0], in[1]); }},
       {F({7, 33, 17}), F({7, 17, 9})}},
      {{"matmul_batched",
        {F({2, 3, 4}), F({4, 5})},
        [](L in) { return matmul(in[0], in[1]); }},
       {F({3, 20, 40}), F({40, 10})}},
      {{"linear",
        {F({5, 4}), F({3, 4}), F({3})},
        [](L in) { return linear(in[0], in[1], in[2]); }},
       {F({64, 300}), F({100, 300}), F({100})}},
  };
}

std::vector<OpCase> other_rows() {
  return {
      {"mm_narrowed_columns",
       {F({50, 64}), F({40, 30})},
       [](L in) { return mm(in[0].narrow(1, 3, 40), in[1]); },
       kTooLargeForFiniteDifferences},
      {"mm_k_zero",
       {F({3, 0}), F({0, 4})},
       [](L in) { return mm(in[0], in[1]); },
       kEmpty},
      {"mm_no_rows", {F({0, 5}), F({5, 3})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_one_by_one", {F({1, 1}), F({1, 1})}, [](L in) { return mm(in[0], in[1]); }},
      {"mm_long_k",
       {F({8, 4097}), F({4097, 8})},
       [](L in) { return mm(in[0], in[1]); },
       kTooLargeForFiniteDifferences},
      {"bmm_transposed",
       {F({7, 17, 33}), F({7, 9, 17})},
       [](L in) { return bmm(in[0].transpose(1, 2), in[1].transpose(1, 2)); },
       kTooLargeForFiniteDifferences},
      {"matmul_dot", {F({300}), F({300})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_mv", {F({30, 40}), F({40})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_vm", {F({40}), F({40, 30})}, [](L in) { return matmul(in[0], in[1]); }},
      {"matmul_broadcast",
       {F({2, 1, 3, 4}), F({3, 4, 2})},
       [](L in) { return matmul(in[0], in[1]); }},
      {"linear_no_bias",
       {F({5, 4}), F({3, 4})},
       [](L in) { return linear(in[0], in[1]); }},
      {"linear_3d",
       {F({2, 5, 4}), F({3, 4}), F({3})},
       [](L in) { return linear(in[0], in[1], in[2]); }},
  };
}

INSTANTIATE_TEST_SUITE_P(Linalg,
                         OpTable,
                         ::testing::ValuesIn(joined({at_two_sizes(many_tile_rows()),
                                                     other_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
