// Dropout2d: zeroes whole channels of [N, C, H, W] (or [C, H, W]) input with
// probability p while training and scales the others by 1/(1-p); the
// identity in eval mode. As LibTorch's torch::nn::Dropout2d; it draws from
// the default generator, as Dropout does.
//
//   tandem::nn::Dropout2d drop(0.25);
//   auto y = drop->forward(x);   // each [H, W] plane kept whole or zeroed
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/dropout.h"

namespace tandem::nn {

using Dropout2dOptions = DropoutOptions;

class Dropout2dImpl : public Cloneable<Dropout2dImpl> {
 public:
  explicit Dropout2dImpl(double p) : Dropout2dImpl(Dropout2dOptions(p)) {}
  explicit Dropout2dImpl(const Dropout2dOptions& options = {});
  /// Checks that p is a probability.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  Dropout2dOptions options;
};
TANDEM_MODULE(Dropout2d);

}  // namespace tandem::nn
