// AdamW (Loshchilov & Hutter): Adam with decoupled weight decay, with
// PyTorch's update rule (torch.optim.AdamW). Each step first shrinks the
// parameter, param *= 1 - lr * weight_decay, then applies Adam's update
// (tandem/optim/adam.h) without adding weight decay to the gradient. The
// default weight_decay is 1e-2.
//
//   tandem::optim::AdamW opt(model->parameters(),
//                            tandem::optim::AdamWOptions(1e-3).weight_decay(0.1));
#pragma once

#include <memory>
#include <vector>

#include "tandem/optim/adam.h"

namespace tandem::optim {

class AdamWOptions : public detail::AdamOptionsBase<AdamWOptions> {
 public:
  static constexpr const char* kOptimizerName = "AdamW";
  AdamWOptions(double lr = 1e-3)  // implicit, as LibTorch
      : AdamOptionsBase(lr, /*weight_decay=*/1e-2) {}
};

using AdamWParamState = AdamParamState;

class AdamW : public Optimizer {
 public:
  explicit AdamW(std::vector<OptimizerParamGroup> param_groups,
                 AdamWOptions defaults = {});
  explicit AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
  const char* name() const override { return "AdamW"; }
};

}  // namespace tandem::optim
