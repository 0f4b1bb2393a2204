// tandem::nn::functional: the stateless forms of the layers, with LibTorch's
// option structs, as torch::nn::functional. Each is a thin forward to the
// op of the same name in tandem:: (tandem::relu, tandem::cross_entropy, ...),
// which can also be called directly with plain arguments.
//
//   namespace F = tandem::nn::functional;
//   auto h = F::relu(F::linear(x, w, b));
//   auto p = F::log_softmax(h, F::LogSoftmaxFuncOptions(1));
//   auto d = F::dropout(h, F::DropoutFuncOptions().p(0.5).training(is_training()));
//   auto loss = F::cross_entropy(h, y,
//   F::CrossEntropyFuncOptions().label_smoothing(0.1));
//   auto c = F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(2).padding(1));
//   auto u = F::conv_transpose2d(c, wt, F::ConvTranspose2dFuncOptions().stride(2));
//   auto p = F::max_pool2d(c, F::MaxPool2dFuncOptions(2));
//   auto n = F::batch_norm(p, mean, var, F::BatchNormFuncOptions().training(true));
#pragma once

#include <tuple>

#include "tandem/core/tensor.h"
#include "tandem/nn/functional/attention.h"
#include "tandem/nn/options/activation.h"
#include "tandem/nn/options/adaptive_pooling.h"
#include "tandem/nn/options/batch_norm.h"
#include "tandem/nn/options/conv.h"
#include "tandem/nn/options/conv1d.h"
#include "tandem/nn/options/conv_transpose.h"
#include "tandem/nn/options/dropout.h"
#include "tandem/nn/options/embedding.h"
#include "tandem/nn/options/group_norm.h"
#include "tandem/nn/options/instance_norm.h"
#include "tandem/nn/options/layer_norm.h"
#include "tandem/nn/options/loss.h"
#include "tandem/nn/options/pooling.h"
#include "tandem/nn/options/pooling1d.h"
#include "tandem/nn/options/upsampling.h"
#include "tandem/ops/activation.h"
#include "tandem/ops/conv.h"
#include "tandem/ops/conv_transpose.h"
#include "tandem/ops/indexing.h"
#include "tandem/ops/interpolate.h"
#include "tandem/ops/linalg.h"
#include "tandem/ops/loss.h"
#include "tandem/ops/normalization.h"
#include "tandem/ops/pooling.h"

namespace tandem::nn::functional {

inline Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = {}) {
  return tandem::linear(input, weight, bias);
}

inline Tensor conv2d(const Tensor& input,
                     const Tensor& weight,
                     const Conv2dFuncOptions& options = {}) {
  return tandem::conv2d(input,
                        weight,
                        options.bias(),
                        options.stride(),
                        options.padding(),
                        options.dilation(),
                        options.groups());
}

inline Tensor conv_transpose1d(const Tensor& input,
                               const Tensor& weight,
                               const ConvTranspose1dFuncOptions& options = {}) {
  return tandem::conv_transpose1d(input,
                                  weight,
                                  options.bias(),
                                  options.stride(),
                                  options.padding(),
                                  options.output_padding(),
                                  options.groups(),
                                  options.dilation());
}

inline Tensor conv_transpose2d(const Tensor& input,
                               const Tensor& weight,
                               const ConvTranspose2dFuncOptions& options = {}) {
  return tandem::conv_transpose2d(input,
                                  weight,
                                  options.bias(),
                                  options.stride(),
                                  options.padding(),
                                  options.output_padding(),
                                  options.groups(),
                                  options.dilation());
}

inline std::tuple<Tensor, Tensor> max_pool2d_with_indices(
    const Tensor& input, const MaxPool2dFuncOptions& options) {
  return tandem::max_pool2d_with_indices(input,
                                         options.kernel_size(),
                                         options.stride(),
                                         options.padding(),
                                         options.dilation(),
                                         options.ceil_mode());
}

inline Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options) {
  return std::get<0>(max_pool2d_with_indices(input, options));
}

inline Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options) {
  return tandem::avg_pool2d(input,
                            options.kernel_size(),
                            options.stride(),
                            options.padding(),
                            options.ceil_mode(),
                            options.count_include_pad(),
                            options.divisor_override());
}

inline Tensor batch_norm(const Tensor& input,
                         const Tensor& running_mean,
                         const Tensor& running_var,
                         const BatchNormFuncOptions& options = {}) {
  return tandem::batch_norm(input,
                            running_mean,
                            running_var,
                            options.weight(),
                            options.bias(),
                            options.training(),
                            options.momentum(),
                            options.eps());
}

inline Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options) {
  return tandem::layer_norm(
      input, options.normalized_shape(), options.weight(), options.bias(), options.eps());
}

inline Tensor embedding(const Tensor& input,
                        const Tensor& weight,
                        const EmbeddingFuncOptions& options = {}) {
  return tandem::embedding(weight, input, options.padding_idx().value_or(-1));
}

inline Tensor relu(Tensor input, const ReLUFuncOptions& options = {}) {
  if (options.inplace()) return tandem::relu_(input);
  return tandem::relu(input);
}

inline Tensor gelu(const Tensor& input, const GELUFuncOptions& options = {}) {
  return tandem::gelu(input, options.approximate());
}

inline Tensor leaky_relu(Tensor input, const LeakyReLUFuncOptions& options = {}) {
  if (options.inplace()) return tandem::leaky_relu_(input, options.negative_slope());
  return tandem::leaky_relu(input, options.negative_slope());
}

inline Tensor elu(Tensor input, const ELUFuncOptions& options = {}) {
  if (options.inplace()) return tandem::elu_(input, options.alpha());
  return tandem::elu(input, options.alpha());
}

inline Tensor selu(Tensor input, const SELUFuncOptions& options = {}) {
  if (options.inplace()) return tandem::selu_(input);
  return tandem::selu(input);
}

inline Tensor silu(const Tensor& input) { return tandem::silu(input); }

inline Tensor mish(const Tensor& input) { return tandem::mish(input); }

inline Tensor softplus(const Tensor& input, const SoftplusFuncOptions& options = {}) {
  return tandem::softplus(input, options.beta(), options.threshold());
}

inline Tensor hardtanh(Tensor input, const HardtanhFuncOptions& options = {}) {
  if (options.inplace()) {
    return tandem::hardtanh_(input, options.min_val(), options.max_val());
  }
  return tandem::hardtanh(input, options.min_val(), options.max_val());
}

inline Tensor prelu(const Tensor& input, const Tensor& weight) {
  return tandem::prelu(input, weight);
}

inline Tensor logsigmoid(const Tensor& input) { return tandem::log_sigmoid(input); }

inline Tensor softsign(const Tensor& input) { return tandem::softsign(input); }

inline Tensor tanh(const Tensor& input) { return tandem::tanh(input); }

inline Tensor sigmoid(const Tensor& input) { return tandem::sigmoid(input); }

inline Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return tandem::softmax(x, options.dim());
}

inline Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& options) {
  const Tensor x = options.dtype() ? input.to(*options.dtype()) : input;
  return tandem::log_softmax(x, options.dim());
}

inline Tensor dropout(const Tensor& input, const DropoutFuncOptions& options = {}) {
  return tandem::dropout(input, options.p(), options.training());
}

inline Tensor mse_loss(const Tensor& input,
                       const Tensor& target,
                       const MSELossFuncOptions& options = {}) {
  return tandem::mse_loss(input, target, options.reduction());
}

inline Tensor nll_loss(const Tensor& input,
                       const Tensor& target,
                       const NLLLossFuncOptions& options = {}) {
  return tandem::nll_loss(
      input, target, options.weight(), options.reduction(), options.ignore_index());
}

inline Tensor cross_entropy(const Tensor& input,
                            const Tensor& target,
                            const CrossEntropyFuncOptions& options = {}) {
  return tandem::cross_entropy(input,
                               target,
                               options.weight(),
                               options.reduction(),
                               options.ignore_index(),
                               options.label_smoothing());
}

inline Tensor binary_cross_entropy(const Tensor& input,
                                   const Tensor& target,
                                   const BinaryCrossEntropyFuncOptions& options = {}) {
  return tandem::binary_cross_entropy(
      input, target, options.weight(), options.reduction());
}

inline Tensor binary_cross_entropy_with_logits(
    const Tensor& input,
    const Tensor& target,
    const BinaryCrossEntropyWithLogitsFuncOptions& options = {}) {
  return tandem::binary_cross_entropy_with_logits(
      input, target, options.weight(), options.pos_weight(), options.reduction());
}

inline Tensor l1_loss(const Tensor& input,
                      const Tensor& target,
                      const L1LossFuncOptions& options = {}) {
  return tandem::l1_loss(input, target, options.reduction());
}

inline Tensor smooth_l1_loss(const Tensor& input,
                             const Tensor& target,
                             const SmoothL1LossFuncOptions& options = {}) {
  return tandem::smooth_l1_loss(input, target, options.reduction(), options.beta());
}

inline Tensor huber_loss(const Tensor& input,
                         const Tensor& target,
                         const HuberLossFuncOptions& options = {}) {
  return tandem::huber_loss(input, target, options.reduction(), options.delta());
}

inline Tensor kl_div(const Tensor& input,
                     const Tensor& target,
                     const KLDivFuncOptions& options = {}) {
  return tandem::kl_div(input, target, options.reduction(), options.log_target());
}

inline Tensor cosine_embedding_loss(const Tensor& input1,
                                    const Tensor& input2,
                                    const Tensor& target,
                                    const CosineEmbeddingLossFuncOptions& options = {}) {
  return tandem::cosine_embedding_loss(
      input1, input2, target, options.margin(), options.reduction());
}

inline Tensor margin_ranking_loss(const Tensor& input1,
                                  const Tensor& input2,
                                  const Tensor& target,
                                  const MarginRankingLossFuncOptions& options = {}) {
  return tandem::margin_ranking_loss(
      input1, input2, target, options.margin(), options.reduction());
}

// ---- 1-D convolution and pooling, adaptive pooling, group and instance
// normalisation, resampling and channel dropout ----

inline Tensor conv1d(const Tensor& input,
                     const Tensor& weight,
                     const Conv1dFuncOptions& options = {}) {
  return tandem::conv1d(input,
                        weight,
                        options.bias(),
                        options.stride(),
                        options.padding(),
                        options.dilation(),
                        options.groups());
}

inline std::tuple<Tensor, Tensor> max_pool1d_with_indices(
    const Tensor& input, const MaxPool1dFuncOptions& options) {
  return tandem::max_pool1d_with_indices(input,
                                         options.kernel_size(),
                                         options.stride(),
                                         options.padding(),
                                         options.dilation(),
                                         options.ceil_mode());
}

inline Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options) {
  return std::get<0>(max_pool1d_with_indices(input, options));
}

inline Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options) {
  return tandem::avg_pool1d(input,
                            options.kernel_size(),
                            options.stride(),
                            options.padding(),
                            options.ceil_mode(),
                            options.count_include_pad());
}

inline Tensor adaptive_avg_pool2d(const Tensor& input,
                                  const AdaptiveAvgPool2dFuncOptions& options) {
  return tandem::adaptive_avg_pool2d(input, options.output_size());
}

inline std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(
    const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return tandem::adaptive_max_pool2d_with_indices(input, options.output_size());
}

inline Tensor adaptive_max_pool2d(const Tensor& input,
                                  const AdaptiveMaxPool2dFuncOptions& options) {
  return tandem::adaptive_max_pool2d(input, options.output_size());
}

inline Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options) {
  return tandem::group_norm(
      input, options.num_groups(), options.weight(), options.bias(), options.eps());
}

inline Tensor instance_norm(const Tensor& input,
                            const InstanceNormFuncOptions& options = {}) {
  return tandem::instance_norm(input,
                               options.running_mean(),
                               options.running_var(),
                               options.weight(),
                               options.bias(),
                               options.use_input_stats(),
                               options.momentum(),
                               options.eps());
}

/// torch.nn.functional.interpolate for 4-D input in modes kNearest and
/// kBilinear: the output size from `size`, or floor(input size *
/// scale_factor), and then upsample_nearest2d / upsample_bilinear2d.
Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

using Dropout2dFuncOptions = DropoutFuncOptions;

inline Tensor dropout2d(const Tensor& input, const Dropout2dFuncOptions& options = {}) {
  return tandem::dropout2d(input, options.p(), options.training());
}

}  // namespace tandem::nn::functional
