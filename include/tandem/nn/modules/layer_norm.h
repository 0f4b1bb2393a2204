// LayerNorm: normalises over the trailing normalized_shape dims of its
// input, with a learned elementwise weight and bias of that shape, as
// LibTorch's torch::nn::LayerNorm.
//
//   tandem::nn::LayerNorm ln(tandem::nn::LayerNormOptions({512}));
//   auto y = ln->forward(x);      // x: [..., 512]
//   std::cout << ln;              // LayerNorm([512], eps=1e-05, elementwise_affine=true)
#pragma once

#include <ostream>
#include <utility>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/layer_norm.h"

namespace tandem::nn {

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(IntList normalized_shape)
      : LayerNormImpl(LayerNormOptions(std::move(normalized_shape))) {}
  explicit LayerNormImpl(const LayerNormOptions& options);

  /// Creates weight (ones) and bias (zeros) of normalized_shape when
  /// elementwise_affine.
  void reset() override;
  /// weight to 1, bias to 0.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LayerNormOptions options;
  /// Undefined unless options.elementwise_affine().
  Tensor weight;
  Tensor bias;
};
TANDEM_MODULE(LayerNorm);

}  // namespace tandem::nn
