// The op table's loss rows (tandem/ops/loss.h): every reduction (mean,
// sum, none, batchmean), class weights, ignore_index, label smoothing,
// pos_weight, log targets, broadcast targets, 1000 and 4097 classes.
// op_cases_test.cpp runs them.
#include "consistency/op_cases.h"

namespace tandem::testing::op_table {
namespace {

// Labels 1 and -1 on `like`'s device, in its dtype: [5] (or a 0-dim 1).
Tensor labels(const Tensor& like, bool scalar = false) {
  Tensor t = scalar ? scalar_tensor(1.0, kFloat64) : tensor({1.0, -1.0, 1.0, -1.0, -1.0});
  return t.to(like.device(), like.dtype());
}

std::vector<OpCase> regression_rows() {
  return {
      {"mse_loss_mean",
       {F({64, 10}), F({64, 10})},
       [](L in) { return mse_loss(in[0], in[1]); }},
      {"mse_loss_sum",
       {F({64, 10}), F({64, 10})},
       [](L in) { return mse_loss(in[0], in[1], kSum); }},
      {"mse_loss_none",
       {F({3, 4}), F({3, 4})},
       [](L in) { return mse_loss(in[0], in[1], kNone); }},
      {"mse_loss_none_broadcast",
       {F({64, 10}), F({10})},
       [](L in) {
         return mse_loss(in[0], in[1].expand({64, 10}), kNone);
       }},
      {"l1_loss", {F({3, 4}), F({3, 4})}, [](L in) { return l1_loss(in[0], in[1]); }},
      {"smooth_l1_loss",
       {F({3, 4}), F({3, 4})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kSum, 0.8); }},
      {"smooth_l1_loss_none",
       {F({64, 10}), F({64, 10})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kNone, 0.5); }},
      {"smooth_l1_loss_beta0",
       {F({3, 4}), F({3, 4})},
       [](L in) { return smooth_l1_loss(in[0], in[1], kNone, 0.0); }},
      {"huber_loss",
       {F({64, 10}), F({64, 10})},
       [](L in) { return huber_loss(in[0], in[1], kMean, 0.6); }},
  };
}

std::vector<OpCase> classification_rows() {
  return {
      {"nll_loss_mean",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return nll_loss(in[0], in[1]); }},
      {"nll_loss_sum",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return nll_loss(in[0], in[1], {}, kSum); }},
      {"nll_loss_sum_weight",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return nll_loss(in[0], in[1], in[2], kSum); }},
      {"nll_loss_none",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return nll_loss(in[0], in[1], {}, kNone); }},
      {"nll_loss_none_ignore",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return nll_loss(in[0], in[1], {}, kNone, /*ignore_index=*/2); }},
      {"nll_loss_weight_ignore",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return nll_loss(in[0], in[1], in[2], kMean, /*ignore_index=*/1); }},
      {"cross_entropy_mean",
       {F({5, 4}), I({5}, 4)},
       [](L in) { return cross_entropy(in[0], in[1]); }},
      {"cross_entropy_1000_classes",
       {F({512, 1000}), I({512}, 1000)},
       [](L in) { return cross_entropy(in[0], in[1]); },
       kTooLargeForFiniteDifferences},
      {"cross_entropy_sum",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kSum); }},
      {"cross_entropy_none",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kNone); }},
      {"cross_entropy_weight_ignore",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return cross_entropy(in[0], in[1], in[2], kMean, 1); }},
      {"cross_entropy_label_smoothing",
       {F({50, 7}), I({50}, 7)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kMean, -100, 0.1); }},
      {"cross_entropy_smoothing_weight_ignore_sum",
       {F({50, 7}), I({50}, 7), W({7})},
       [](L in) { return cross_entropy(in[0], in[1], in[2], kSum, 4, 0.2); }},
      {"cross_entropy_smoothing_none_4097",
       {F({16, 4097}), I({16}, 4097)},
       [](L in) { return cross_entropy(in[0], in[1], {}, kNone, -100, 0.05); },
       kTooLargeForFiniteDifferences},
  };
}

std::vector<OpCase> probability_rows() {
  return {
      {"bce_mean",
       {U({3, 4}), U({3, 4})},
       [](L in) { return binary_cross_entropy(in[0], in[1]); }},
      {"bce_weight_none",
       {U({3, 4}), U({3, 4}), W({4})},
       [](L in) { return binary_cross_entropy(in[0], in[1], in[2], kNone); }},
      {"bce_weight_sum",
       {F({64, 10}), F({64, 10}), W({10})},
       [](L in) {
         return binary_cross_entropy(sigmoid(in[0]), sigmoid(in[1]), in[2], kSum);
       }},
      {"bce_with_logits_mean",
       {F({3, 4}), U({3, 4})},
       [](L in) { return binary_cross_entropy_with_logits(in[0], in[1]); }},
      {"bce_with_logits_weights_sum",
       {F({3, 4}), U({3, 4}), W({3, 1}), W({4})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], in[1], in[2], in[3], kSum);
       }},
      {"bce_with_logits_pos_weight",
       {F({64, 10}), F({64, 10}), W({10})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], sigmoid(in[1]), {}, in[2]);
       }},
      {"bce_with_logits_pos_weight_grad",
       {F({3, 4}), U({3, 4}), P({4})},
       [](L in) {
         return binary_cross_entropy_with_logits(in[0], in[1], {}, in[2], kNone);
       }},
      {"kl_div_batchmean",
       {F({64, 10}), U({64, 10})},
       [](L in) { return kl_div(in[0], in[1], kBatchMean); }},
      {"kl_div_log_target_none",
       {F({3, 4}), F({3, 4})},
       [](L in) { return kl_div(in[0], in[1], kNone, /*log_target=*/true); }},
  };
}

std::vector<OpCase> embedding_loss_rows() {
  return {
      {"cosine_embedding_loss",
       {F({5, 3}), F({5, 3})},
       [](L in) { return cosine_embedding_loss(in[0], in[1], labels(in[0]), -0.3); }},
      {"cosine_embedding_loss_1d",
       {F({4}), F({4})},
       [](L in) {
         return cosine_embedding_loss(
             in[0], in[1], labels(in[0], /*scalar=*/true), 0.0, kSum);
       }},
      {"margin_ranking_loss",
       {F({5}), F({5})},
       [](L in) { return margin_ranking_loss(in[0], in[1], labels(in[0]), 0.4, kNone); }},
  };
}

INSTANTIATE_TEST_SUITE_P(Losses,
                         OpTable,
                         ::testing::ValuesIn(joined({regression_rows(),
                                                     classification_rows(),
                                                     probability_rows(),
                                                     embedding_loss_rows()})),
                         row_name);

}  // namespace
}  // namespace tandem::testing::op_table
