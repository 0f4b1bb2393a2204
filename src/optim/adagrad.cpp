#include "tandem/optim/adagrad.h"

#include "optim/fused_steps.h"

namespace tandem::optim {

AdagradOptions::AdagradOptions(double lr) : lr_(lr) {}

std::unique_ptr<OptimizerOptions> AdagradOptions::clone() const {
  return std::make_unique<AdagradOptions>(*this);
}

void AdagradOptions::validate() const {
  TANDEM_CHECK(lr_ >= 0, "Adagrad: invalid learning rate ", lr_, " (must be >= 0)");
  TANDEM_CHECK(
      lr_decay_ >= 0, "Adagrad: invalid lr_decay ", lr_decay_, " (must be >= 0)");
  TANDEM_CHECK(weight_decay_ >= 0,
               "Adagrad: invalid weight_decay ",
               weight_decay_,
               " (must be >= 0)");
  TANDEM_CHECK(initial_accumulator_value_ >= 0,
               "Adagrad: invalid initial_accumulator_value ",
               initial_accumulator_value_,
               " (must be >= 0)");
  TANDEM_CHECK(eps_ >= 0, "Adagrad: invalid eps ", eps_, " (must be >= 0)");
}

void AdagradOptions::visit_fields(FieldVisitor& visitor) {
  visitor.field("lr", lr_);
  visitor.field("lr_decay", lr_decay_);
  visitor.field("weight_decay", weight_decay_);
  visitor.field("initial_accumulator_value", initial_accumulator_value_);
  visitor.field("eps", eps_);
}

std::unique_ptr<OptimizerParamState> AdagradParamState::clone() const {
  auto copy = std::make_unique<AdagradParamState>();
  copy->step_ = step_;
  if (sum_.defined()) copy->sum_ = sum_.clone();
  return copy;
}

void AdagradParamState::visit_fields(FieldVisitor& visitor) {
  visitor.field("step", step_);
  visitor.field("sum", sum_);
}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
              defaults) {}

Tensor Adagrad::step(LossClosure closure) {
  return step_each_param(closure,
                         [](Tensor& param,
                            const Tensor& grad,
                            OptimizerOptions& options,
                            OptimizerParamState& param_state) {
                           const auto& o = static_cast<const AdagradOptions&>(options);
                           auto& state = static_cast<AdagradParamState&>(param_state);
                           const int64_t step = state.step() + 1;
                           detail::adagrad_step("Adagrad",
                                                param,
                                                grad,
                                                state.sum(),
                                                {o.lr(),
                                                 o.lr_decay(),
                                                 o.weight_decay(),
                                                 o.eps(),
                                                 step,
                                                 o.initial_accumulator_value()});
                           // Counted once the update went through.
                           state.step() = step;
                         });
}

std::unique_ptr<OptimizerParamState> Adagrad::make_param_state() const {
  return std::make_unique<AdagradParamState>();
}

}  // namespace tandem::optim
