// Options for LayerNorm and functional::layer_norm, with LibTorch's setters.
//
//   tandem::nn::LayerNorm ln(tandem::nn::LayerNormOptions({512}).eps(1e-6));
//   auto y = F::layer_norm(x, F::LayerNormFuncOptions({512}).weight(w).bias(b));
#pragma once

#include <utility>

#include "tandem/core/int_list.h"
#include "tandem/core/tensor.h"

namespace tandem::nn {

class LayerNormOptions {
 public:
  /// The trailing dims of the input that are normalised together.
  LayerNormOptions(IntList normalized_shape)  // implicit
      : normalized_shape_(std::move(normalized_shape)) {}

  LayerNormOptions& normalized_shape(IntList value) {
    normalized_shape_ = std::move(value);
    return *this;
  }
  /// Added to the variance before the square root (default 1e-5).
  LayerNormOptions& eps(double value) {
    eps_ = value;
    return *this;
  }
  /// Whether the layer learns a weight and bias of normalized_shape
  /// (default true).
  LayerNormOptions& elementwise_affine(bool value) {
    elementwise_affine_ = value;
    return *this;
  }

  const IntList& normalized_shape() const noexcept { return normalized_shape_; }
  double eps() const noexcept { return eps_; }
  bool elementwise_affine() const noexcept { return elementwise_affine_; }

 private:
  IntList normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};

namespace functional {

class LayerNormFuncOptions {
 public:
  LayerNormFuncOptions(IntList normalized_shape)  // implicit
      : normalized_shape_(std::move(normalized_shape)) {}

  /// Of normalized_shape, or undefined (1).
  LayerNormFuncOptions& weight(const Tensor& value) {
    weight_ = value;
    return *this;
  }
  /// Of normalized_shape, or undefined (0).
  LayerNormFuncOptions& bias(const Tensor& value) {
    bias_ = value;
    return *this;
  }
  LayerNormFuncOptions& eps(double value) {
    eps_ = value;
    return *this;
  }

  const IntList& normalized_shape() const noexcept { return normalized_shape_; }
  const Tensor& weight() const noexcept { return weight_; }
  const Tensor& bias() const noexcept { return bias_; }
  double eps() const noexcept { return eps_; }

 private:
  IntList normalized_shape_;
  Tensor weight_;
  Tensor bias_;
  double eps_ = 1e-5;
};

}  // namespace functional
}  // namespace tandem::nn
