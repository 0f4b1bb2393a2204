// The op table's normalisation rows (tandem/ops/normalization.h): batch,
// layer, group and instance norm, with and without affine parameters,
// training statistics (and running ones updated on the side) and
// evaluation ones, inputs far from zero mean, transposed input and sizes
// of many blocks per channel or row. op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Each also at a size of many blocks per channel or row.
std::vector<TwoSizes> many_block_rows() {
  return {
      {{"batch_norm_train",
        {F({4, 3, 3, 3}), F({3}), F({3})},
        [](L in) { return batch_norm(in[0], {}, {}, in[1], in[2], /*training=*/true); }},
       {F({32, 64, 14, 14}), F({64}), F({64})}},
      {{"batch_norm_train_running_stats_2d",
        {F({5, 4}), F({4}), F({4})},
        [](L in) {
          Tensor mean = zeros_like(in[1].detach()), var = ones_like(in[1].detach());
          return batch_norm(in[0], mean, var, in[1], in[2], /*training=*/true);
        }},
       {F({256, 100}), F({100}), F({100})}},
      {{"layer_norm_last_dim",
        {F({3, 5}), F({5}), F({5})},
        [](L in) { return layer_norm(in[0], {in[0].size(-1)}, in[1], in[2]); }},
       {F({64, 4097}), F({4097}), F({4097})}},
      {{"group_norm",
        {F({3, 6, 4}), F({6}), F({6})},
        [](L in) { return group_norm(in[0], 3, in[1], in[2]); }},
       {F({4, 12, 9, 9}), F({12}), F({12})}},
      {{"instance_norm_affine",
        {F({2, 3, 3, 4}), F({3}), F({3})},
        [](L in) { return instance_norm(in[0], {}, {}, in[1], in[2]); }},
       {F({4, 6, 9, 9}), F({6}), F({6})}},
  };
}

std::vector<OpCase> batch_norm_rows() {
  return {
      {"batch_norm_train_offset_mean",
       {F({16, 8, 10, 10}), F({8}), F({8})},
       [](L in) { return batch_norm(in[0] + 100, {}, {}, in[1], in[2], true); },
       kTooLargeForFiniteDifferences},
      {"batch_norm_train_no_affine",
       {F({3, 2, 4})},
       [](L in) { return batch_norm(in[0], {}, {}, {}, {}, /*training=*/true); }},
      {"batch_norm_eval",
       {F({4, 3, 2, 2}), F({3}), F({3}), W({3}), W({3})},
       [](L in) { return batch_norm(in[0], in[3], in[4], in[1], in[2]); }},
      {"batch_norm_eval_no_affine_large",
       {F({16, 32, 9, 9}), W({32}), W({32})},
       [](L in) { return batch_norm(in[0], in[1], in[2]); },
       kTooLargeForFiniteDifferences},
  };
}

std::vector<OpCase> other_rows() {
  return {
      {"layer_norm_last_two_dims",
       {F({2, 3, 4}), F({3, 4}), F({3, 4})},
       [](L in) {
         return layer_norm(in[0], {3, 4}, in[1], in[2]);
       }},
      {"layer_norm_no_affine", {F({4, 6})}, [](L in) { return layer_norm(in[0], {6}); }},
      {"layer_norm_offset_mean",
       {F({32, 300}), F({300}), F({300})},
       [](L in) { return layer_norm(in[0] + 100, {300}, in[1], in[2]); },
       kTooLargeForFiniteDifferences},
      {"layer_norm_transposed_input",
       {F({40, 30}), F({40})},
       [](L in) { return layer_norm(in[0].t(), {40}, in[1]); }},
      {"group_norm_no_affine_4d",
       {F({2, 4, 3, 3})},
       [](L in) { return group_norm(in[0], 2); }},
      {"instance_norm_running_stats",
       {F({2, 3, 4, 3})},
       [](L in) {
         const Tensor c = in[0].detach();
         Tensor mean = zeros({3}, c.options()), var = ones({3}, c.options());
         return instance_norm(in[0], mean, var, {}, {}, /*use_input_stats=*/true);
       }},
      {"instance_norm_eval",
       {F({2, 3, 2, 2}), F({3}), F({3}), W({3}), W({3})},
       [](L in) {
         return instance_norm(
             in[0], in[3], in[4], in[1], in[2], /*use_input_stats=*/false);
       }},
  };
}

INSTANTIATE_TEST_SUITE_P(Normalization,
                         OpTable,
                         ::testing::ValuesIn(joined({at_two_sizes(many_block_rows()),
                                                     batch_norm_rows(),
                                                     other_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
