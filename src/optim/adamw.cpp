#include "tandem/optim/adamw.h"

#include "optim/adam_update.h"

namespace tandem::optim {

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
            defaults) {}

Tensor AdamW::step(LossClosure closure) {
  return step_each_param(closure,
                         [](Tensor& param,
                            const Tensor& grad,
                            OptimizerOptions& options,
                            OptimizerParamState& state) {
                           detail::adam_update("AdamW",
                                               /*decoupled_weight_decay=*/true,
                                               param,
                                               grad,
                                               static_cast<const AdamWOptions&>(options),
                                               static_cast<AdamParamState&>(state));
                         });
}

std::unique_ptr<OptimizerParamState> AdamW::make_param_state() const {
  return std::make_unique<AdamParamState>();
}

}  // namespace tandem::optim
