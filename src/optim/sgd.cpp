#include "tandem/optim/sgd.h"

#include "optim/fused_steps.h"

namespace tandem::optim {

SGDOptions::SGDOptions(double lr) : lr_(lr) {}

std::unique_ptr<OptimizerOptions> SGDOptions::clone() const {
  return std::make_unique<SGDOptions>(*this);
}

void SGDOptions::validate() const {
  TANDEM_CHECK(lr_ >= 0, "SGD: invalid learning rate ", lr_, " (must be >= 0)");
  TANDEM_CHECK(momentum_ >= 0, "SGD: invalid momentum ", momentum_, " (must be >= 0)");
  TANDEM_CHECK(
      weight_decay_ >= 0, "SGD: invalid weight_decay ", weight_decay_, " (must be >= 0)");
  TANDEM_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0),
               "SGD: nesterov momentum requires a momentum > 0 and zero dampening ",
               "(got momentum ",
               momentum_,
               ", dampening ",
               dampening_,
               ")");
}

void SGDOptions::visit_fields(FieldVisitor& visitor) {
  visitor.field("lr", lr_);
  visitor.field("momentum", momentum_);
  visitor.field("dampening", dampening_);
  visitor.field("weight_decay", weight_decay_);
  visitor.field("nesterov", nesterov_);
}

std::unique_ptr<OptimizerParamState> SGDParamState::clone() const {
  auto copy = std::make_unique<SGDParamState>();
  if (momentum_buffer_.defined()) copy->momentum_buffer_ = momentum_buffer_.clone();
  return copy;
}

void SGDParamState::visit_fields(FieldVisitor& visitor) {
  visitor.field("momentum_buffer", momentum_buffer_);
}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
          defaults) {}

Tensor SGD::step(LossClosure closure) {
  return step_each_param(
      closure,
      [](Tensor& param,
         const Tensor& grad,
         OptimizerOptions& options,
         OptimizerParamState& state) {
        const auto& o = static_cast<const SGDOptions&>(options);
        detail::sgd_step(
            "SGD",
            param,
            grad,
            static_cast<SGDParamState&>(state).momentum_buffer(),
            {o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov()});
      });
}

std::unique_ptr<OptimizerParamState> SGD::make_param_state() const {
  return std::make_unique<SGDParamState>();
}

}  // namespace tandem::optim
