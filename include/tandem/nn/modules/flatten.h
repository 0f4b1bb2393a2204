// Flatten: merges dims start_dim..end_dim into one (by default every dim but
// the batch dim), as LibTorch's torch::nn::Flatten.
//
//   tandem::nn::Flatten flat;
//   auto y = flat->forward(tandem::zeros({64, 1, 28, 28}));   // [64, 784]
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/flatten.h"

namespace tandem::nn {

class FlattenImpl : public Cloneable<FlattenImpl> {
 public:
  explicit FlattenImpl(const FlattenOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  FlattenOptions options;
};
TANDEM_MODULE(Flatten);

}  // namespace tandem::nn
