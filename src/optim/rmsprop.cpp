#include "tandem/optim/rmsprop.h"

#include "optim/fused_steps.h"

namespace tandem::optim {

RMSpropOptions::RMSpropOptions(double lr) : lr_(lr) {}

std::unique_ptr<OptimizerOptions> RMSpropOptions::clone() const {
  return std::make_unique<RMSpropOptions>(*this);
}

void RMSpropOptions::validate() const {
  TANDEM_CHECK(lr_ >= 0, "RMSprop: invalid learning rate ", lr_, " (must be >= 0)");
  TANDEM_CHECK(eps_ >= 0, "RMSprop: invalid eps ", eps_, " (must be >= 0)");
  TANDEM_CHECK(
      momentum_ >= 0, "RMSprop: invalid momentum ", momentum_, " (must be >= 0)");
  TANDEM_CHECK(weight_decay_ >= 0,
               "RMSprop: invalid weight_decay ",
               weight_decay_,
               " (must be >= 0)");
  TANDEM_CHECK(alpha_ >= 0, "RMSprop: invalid alpha ", alpha_, " (must be >= 0)");
}

void RMSpropOptions::visit_fields(FieldVisitor& visitor) {
  visitor.field("lr", lr_);
  visitor.field("alpha", alpha_);
  visitor.field("eps", eps_);
  visitor.field("weight_decay", weight_decay_);
  visitor.field("momentum", momentum_);
  visitor.field("centered", centered_);
}

std::unique_ptr<OptimizerParamState> RMSpropParamState::clone() const {
  auto copy = std::make_unique<RMSpropParamState>();
  copy->step_ = step_;
  for (auto [from, to] : {std::pair{&square_avg_, &copy->square_avg_},
                          std::pair{&momentum_buffer_, &copy->momentum_buffer_},
                          std::pair{&grad_avg_, &copy->grad_avg_}}) {
    if (from->defined()) *to = from->clone();
  }
  return copy;
}

void RMSpropParamState::visit_fields(FieldVisitor& visitor) {
  visitor.field("step", step_);
  visitor.field("square_avg", square_avg_);
  visitor.field("momentum_buffer", momentum_buffer_);
  visitor.field("grad_avg", grad_avg_);
}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
              defaults) {}

Tensor RMSprop::step(LossClosure closure) {
  return step_each_param(
      closure,
      [](Tensor& param,
         const Tensor& grad,
         OptimizerOptions& options,
         OptimizerParamState& param_state) {
        const auto& o = static_cast<const RMSpropOptions&>(options);
        auto& state = static_cast<RMSpropParamState&>(param_state);
        detail::rmsprop_step(
            "RMSprop",
            param,
            grad,
            state.square_avg(),
            state.momentum_buffer(),
            state.grad_avg(),
            {o.lr(), o.alpha(), o.eps(), o.weight_decay(), o.momentum(), o.centered()});
        // Counted once the update went through.
        ++state.step();
      });
}

std::unique_ptr<OptimizerParamState> RMSprop::make_param_state() const {
  return std::make_unique<RMSpropParamState>();
}

}  // namespace tandem::optim
