#include "tandem/optim/adam.h"

#include "optim/adam_update.h"

namespace tandem::optim {

void detail::check_adam_options(const char* optimizer,
                                double lr,
                                const std::tuple<double, double>& betas,
                                double eps,
                                double weight_decay) {
  const auto [beta1, beta2] = betas;
  TANDEM_CHECK(lr >= 0, optimizer, ": invalid learning rate ", lr, " (must be >= 0)");
  TANDEM_CHECK(eps >= 0, optimizer, ": invalid eps ", eps, " (must be >= 0)");
  TANDEM_CHECK(beta1 >= 0 && beta1 < 1,
               optimizer,
               ": invalid beta1 ",
               beta1,
               " (must be in [0, 1))");
  TANDEM_CHECK(beta2 >= 0 && beta2 < 1,
               optimizer,
               ": invalid beta2 ",
               beta2,
               " (must be in [0, 1))");
  TANDEM_CHECK(weight_decay >= 0,
               optimizer,
               ": invalid weight_decay ",
               weight_decay,
               " (must be >= 0)");
}

std::unique_ptr<OptimizerParamState> AdamParamState::clone() const {
  auto copy = std::make_unique<AdamParamState>();
  copy->step_ = step_;
  for (auto [from, to] : {std::pair{&exp_avg_, &copy->exp_avg_},
                          std::pair{&exp_avg_sq_, &copy->exp_avg_sq_},
                          std::pair{&max_exp_avg_sq_, &copy->max_exp_avg_sq_}}) {
    if (from->defined()) *to = from->clone();
  }
  return copy;
}

void AdamParamState::visit_fields(FieldVisitor& visitor) {
  visitor.field("step", step_);
  visitor.field("exp_avg", exp_avg_);
  visitor.field("exp_avg_sq", exp_avg_sq_);
  visitor.field("max_exp_avg_sq", max_exp_avg_sq_);
}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {}

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
           defaults) {}

Tensor Adam::step(LossClosure closure) {
  return step_each_param(closure,
                         [](Tensor& param,
                            const Tensor& grad,
                            OptimizerOptions& options,
                            OptimizerParamState& state) {
                           detail::adam_update("Adam",
                                               /*decoupled_weight_decay=*/false,
                                               param,
                                               grad,
                                               static_cast<const AdamOptions&>(options),
                                               static_cast<AdamParamState&>(state));
                         });
}

std::unique_ptr<OptimizerParamState> Adam::make_param_state() const {
  return std::make_unique<AdamParamState>();
}

}  // namespace tandem::optim
