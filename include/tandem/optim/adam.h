// Adam (Kingma & Ba), with PyTorch's update rule (torch.optim.Adam), including
// L2 weight decay added to the gradient and the AMSGrad variant:
//
//   step += 1;  g = grad + weight_decay * param
//   exp_avg = beta1 * exp_avg + (1 - beta1) * g
//   exp_avg_sq = beta2 * exp_avg_sq + (1 - beta2) * g * g
//   v = amsgrad ? (max_exp_avg_sq = max(max_exp_avg_sq, exp_avg_sq)) : exp_avg_sq
//   param -= lr / (1 - beta1^step) * exp_avg
//            / (sqrt(v) / sqrt(1 - beta2^step) + eps)
//
//   tandem::optim::Adam opt(model->parameters(),
//                           tandem::optim::AdamOptions(1e-3).betas({0.9, 0.98}));
//
// AdamW (tandem/optim/adamw.h) shares the options and state below.
#pragma once

#include <cstdint>
#include <memory>
#include <tuple>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

namespace detail {

/// Throws naming `optimizer` unless the values are in PyTorch's ranges.
void check_adam_options(const char* optimizer,
                        double lr,
                        const std::tuple<double, double>& betas,
                        double eps,
                        double weight_decay);

/// The options of Adam and AdamW; setters return the derived type so that
/// chains keep it (AdamWOptions(1e-3).eps(1e-6) is an AdamWOptions).
template <typename Derived>
class AdamOptionsBase : public OptimizerOptions {
 public:
  using betas_t = std::tuple<double, double>;

  double lr() const { return lr_; }
  Derived& lr(double lr) {
    lr_ = lr;
    return self();
  }
  const betas_t& betas() const { return betas_; }
  Derived& betas(const betas_t& betas) {
    betas_ = betas;
    return self();
  }
  double eps() const { return eps_; }
  Derived& eps(double eps) {
    eps_ = eps;
    return self();
  }
  double weight_decay() const { return weight_decay_; }
  Derived& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return self();
  }
  bool amsgrad() const { return amsgrad_; }
  Derived& amsgrad(bool amsgrad) {
    amsgrad_ = amsgrad;
    return self();
  }

  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  void validate() const override {
    check_adam_options(Derived::kOptimizerName, lr_, betas_, eps_, weight_decay_);
  }
  void visit_fields(FieldVisitor& visitor) override {
    visitor.field("lr", lr_);
    visitor.field("beta1", std::get<0>(betas_));
    visitor.field("beta2", std::get<1>(betas_));
    visitor.field("eps", eps_);
    visitor.field("weight_decay", weight_decay_);
    visitor.field("amsgrad", amsgrad_);
  }

 protected:
  AdamOptionsBase(double lr, double weight_decay)
      : lr_(lr), weight_decay_(weight_decay) {}

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  double lr_;
  betas_t betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
};

}  // namespace detail

class AdamOptions : public detail::AdamOptionsBase<AdamOptions> {
 public:
  static constexpr const char* kOptimizerName = "Adam";
  AdamOptions(double lr = 1e-3)  // implicit, as LibTorch
      : AdamOptionsBase(lr, /*weight_decay=*/0) {}
};

class AdamParamState : public OptimizerParamState {
 public:
  int64_t step() const { return step_; }
  int64_t& step() { return step_; }
  AdamParamState& step(int64_t step) {
    step_ = step;
    return *this;
  }
  const Tensor& exp_avg() const { return exp_avg_; }
  Tensor& exp_avg() { return exp_avg_; }
  AdamParamState& exp_avg(Tensor exp_avg) {
    exp_avg_ = std::move(exp_avg);
    return *this;
  }
  const Tensor& exp_avg_sq() const { return exp_avg_sq_; }
  Tensor& exp_avg_sq() { return exp_avg_sq_; }
  AdamParamState& exp_avg_sq(Tensor exp_avg_sq) {
    exp_avg_sq_ = std::move(exp_avg_sq);
    return *this;
  }
  /// Defined only with amsgrad.
  const Tensor& max_exp_avg_sq() const { return max_exp_avg_sq_; }
  Tensor& max_exp_avg_sq() { return max_exp_avg_sq_; }
  AdamParamState& max_exp_avg_sq(Tensor max_exp_avg_sq) {
    max_exp_avg_sq_ = std::move(max_exp_avg_sq);
    return *this;
  }

  std::unique_ptr<OptimizerParamState> clone() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  int64_t step_ = 0;
  Tensor exp_avg_;
  Tensor exp_avg_sq_;
  Tensor max_exp_avg_sq_;
};

class Adam : public Optimizer {
 public:
  explicit Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  explicit Adam(std::vector<Tensor> params, AdamOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
  const char* name() const override { return "Adam"; }
};

}  // namespace tandem::optim
