// Dropout: zeroes elements with probability p while training and scales the
// rest by 1/(1-p); the identity in eval mode. As LibTorch's torch::nn::Dropout.
//
//   tandem::nn::Dropout drop(0.2);
//   drop->train();  auto y = drop->forward(x);   // random mask
//   drop->eval();   auto z = drop->forward(x);   // z is x
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/dropout.h"

namespace tandem::nn {

class DropoutImpl : public Cloneable<DropoutImpl> {
 public:
  explicit DropoutImpl(double p) : DropoutImpl(DropoutOptions(p)) {}
  explicit DropoutImpl(const DropoutOptions& options = {});
  /// Checks that p is a probability.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  DropoutOptions options;
};
TANDEM_MODULE(Dropout);

}  // namespace tandem::nn
