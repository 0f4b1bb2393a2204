// Adagrad (Duchi et al.), with PyTorch's update rule (torch.optim.Adagrad)
// for dense gradients:
//
//   step += 1;  g = grad + weight_decay * param
//   clr = lr / (1 + (step - 1) * lr_decay)
//   sum += g * g            (sum starts at initial_accumulator_value)
//   param -= clr * g / (sqrt(sum) + eps)
//
//   tandem::optim::Adagrad opt(model->parameters(),
//                              tandem::optim::AdagradOptions(0.1).lr_decay(1e-3));
//
// PyTorch makes `sum` when the optimizer is built; tandem makes it on a
// parameter's first step, from the group's initial_accumulator_value then.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

class AdagradOptions : public OptimizerOptions {
 public:
  AdagradOptions(double lr = 1e-2);  // implicit, as LibTorch

  double lr() const { return lr_; }
  AdagradOptions& lr(double lr) {
    lr_ = lr;
    return *this;
  }
  double lr_decay() const { return lr_decay_; }
  AdagradOptions& lr_decay(double lr_decay) {
    lr_decay_ = lr_decay;
    return *this;
  }
  double weight_decay() const { return weight_decay_; }
  AdagradOptions& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return *this;
  }
  double initial_accumulator_value() const { return initial_accumulator_value_; }
  AdagradOptions& initial_accumulator_value(double value) {
    initial_accumulator_value_ = value;
    return *this;
  }
  double eps() const { return eps_; }
  AdagradOptions& eps(double eps) {
    eps_ = eps;
    return *this;
  }

  std::unique_ptr<OptimizerOptions> clone() const override;
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  void validate() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  double lr_;
  double lr_decay_ = 0;
  double weight_decay_ = 0;
  double initial_accumulator_value_ = 0;
  double eps_ = 1e-10;
};

class AdagradParamState : public OptimizerParamState {
 public:
  int64_t step() const { return step_; }
  int64_t& step() { return step_; }
  AdagradParamState& step(int64_t step) {
    step_ = step;
    return *this;
  }
  const Tensor& sum() const { return sum_; }
  Tensor& sum() { return sum_; }
  AdagradParamState& sum(Tensor sum) {
    sum_ = std::move(sum);
    return *this;
  }

  std::unique_ptr<OptimizerParamState> clone() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  int64_t step_ = 0;
  Tensor sum_;
};

class Adagrad : public Optimizer {
 public:
  explicit Adagrad(std::vector<OptimizerParamGroup> param_groups,
                   AdagradOptions defaults = {});
  explicit Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
  const char* name() const override { return "Adagrad"; }
};

}  // namespace tandem::optim
