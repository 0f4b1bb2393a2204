#include "tandem/optim/optimizer.h"

#include <unordered_set>

#include "tandem/core/profiler.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::optim {

// ---- OptimizerParamGroup ----

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params)
    : params_(std::move(params)) {}

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params,
                                         std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_),
      options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this == &other) return *this;
  params_ = other.params_;
  options_ = other.options_ ? other.options_->clone() : nullptr;
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  TANDEM_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  TANDEM_CHECK(options_ != nullptr, "OptimizerParamGroup: the group has no options");
  return *options_;
}

void OptimizerParamGroup::set_options(std::unique_ptr<OptimizerOptions> options) {
  options_ = std::move(options);
}

// ---- Optimizer ----

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  TANDEM_INTERNAL_ASSERT(defaults_ != nullptr, "optimizer made without defaults");
  defaults_->validate();
  for (const auto& group : param_groups) add_param_group(group);
}

void Optimizer::check_new_params(const char* op,
                                 const std::vector<Tensor>& params) const {
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& group : param_groups_) {
    for (const auto& p : group.params()) seen.insert(p.unsafe_impl());
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    TANDEM_CHECK(p.defined(), op, ": parameter ", i, " is undefined");
    TANDEM_CHECK(p.is_leaf(),
                 op,
                 ": cannot optimize a non-leaf tensor (parameter ",
                 i,
                 ", shape ",
                 p.sizes(),
                 ")");
    TANDEM_CHECK(seen.insert(p.unsafe_impl()).second,
                 op,
                 ": parameter ",
                 i,
                 " (shape ",
                 p.sizes(),
                 ") appears more than once in the optimizer");
  }
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  check_new_params("add_param_group", param_group.params());
  OptimizerParamGroup group(
      param_group.params(),
      param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  group.options().validate();
  param_groups_.push_back(std::move(group));
}

void Optimizer::add_parameters(const std::vector<Tensor>& parameters) {
  if (param_groups_.empty()) {
    add_param_group(OptimizerParamGroup(parameters));
    return;
  }
  check_new_params("add_parameters", parameters);
  auto& params = param_groups_[0].params();
  params.insert(params.end(), parameters.begin(), parameters.end());
}

void Optimizer::zero_grad(bool set_to_none) {
  NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      if (set_to_none) {
        p.mutable_grad() = Tensor();
      } else {
        p.mutable_grad().zero_();
      }
    }
  }
}

std::vector<Tensor> Optimizer::parameters() const {
  std::vector<Tensor> out;
  for (const auto& group : param_groups_) {
    out.insert(out.end(), group.params().begin(), group.params().end());
  }
  return out;
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& group : param_groups_) n += group.params().size();
  return n;
}

Tensor Optimizer::step_each_param(const LossClosure& closure, const ParamUpdate& update) {
  Tensor loss;
  if (closure) {
    EnableGradGuard grad_mode;
    loss = closure();
  }
  NoGradGuard no_grad;
  const Device device = param_groups_.empty() || param_groups_[0].params().empty()
                            ? Device(kCPU)
                            : param_groups_[0].params()[0].device();
  profiler::Span span(
      "optim", [this] { return std::string(name()) + ".step"; }, device);
  span.time_on_queue(device);
  for (auto& group : param_groups_) {
    for (auto& p : group.params()) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      std::unique_ptr<OptimizerParamState>& state = state_[p.unsafe_impl()];
      if (!state) state = make_param_state();
      update(p, grad, group.options(), *state);
    }
  }
  return loss;
}

}  // namespace tandem::optim
