// Linear (y = x W^T + b) and Identity, as LibTorch's torch::nn::Linear.
// Linear initialises like PyTorch: weight from kaiming_uniform_(a=sqrt(5)),
// that is U(-1/sqrt(in), 1/sqrt(in)), and bias from the same range.
//
//   tandem::nn::Linear fc(784, 64);
//   tandem::nn::Linear no_bias(tandem::nn::LinearOptions(784, 64).bias(false));
//   auto y = fc->forward(x);             // x: [..., 784] -> [..., 64]
//   std::cout << fc;                     // Linear(in_features=784, out_features=64,
//   bias=true)
#pragma once

#include <cstdint>
#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/linear.h"

namespace tandem::nn {

class LinearImpl : public Cloneable<LinearImpl> {
 public:
  LinearImpl(int64_t in_features, int64_t out_features)
      : LinearImpl(LinearOptions(in_features, out_features)) {}
  explicit LinearImpl(const LinearOptions& options);

  /// Creates weight [out, in] and bias [out] and initialises them.
  void reset() override;
  /// Draws fresh initial values (PyTorch's reset_parameters).
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LinearOptions options;
  Tensor weight;
  /// Undefined when options.bias() is false.
  Tensor bias;
};
TANDEM_MODULE(Linear);

/// Returns its input unchanged (a placeholder layer).
class IdentityImpl : public Cloneable<IdentityImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input) { return input; }
};
TANDEM_MODULE(Identity);

}  // namespace tandem::nn
