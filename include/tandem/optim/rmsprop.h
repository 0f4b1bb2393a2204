// RMSprop (Hinton), with PyTorch's update rule (torch.optim.RMSprop):
//
//   g = grad + weight_decay * param
//   square_avg = alpha * square_avg + (1 - alpha) * g * g
//   avg = sqrt(square_avg) + eps, or when centered, with
//         grad_avg = alpha * grad_avg + (1 - alpha) * g,
//         avg = sqrt(square_avg - grad_avg * grad_avg) + eps
//   momentum > 0: buf = momentum * buf + g / avg;  param -= lr * buf
//   otherwise:    param -= lr * g / avg
//
//   tandem::optim::RMSprop opt(model->parameters(),
//                              tandem::optim::RMSpropOptions(0.01).momentum(0.9));
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

class RMSpropOptions : public OptimizerOptions {
 public:
  RMSpropOptions(double lr = 1e-2);  // implicit, as LibTorch

  double lr() const { return lr_; }
  RMSpropOptions& lr(double lr) {
    lr_ = lr;
    return *this;
  }
  double alpha() const { return alpha_; }
  RMSpropOptions& alpha(double alpha) {
    alpha_ = alpha;
    return *this;
  }
  double eps() const { return eps_; }
  RMSpropOptions& eps(double eps) {
    eps_ = eps;
    return *this;
  }
  double weight_decay() const { return weight_decay_; }
  RMSpropOptions& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return *this;
  }
  double momentum() const { return momentum_; }
  RMSpropOptions& momentum(double momentum) {
    momentum_ = momentum;
    return *this;
  }
  bool centered() const { return centered_; }
  RMSpropOptions& centered(bool centered) {
    centered_ = centered;
    return *this;
  }

  std::unique_ptr<OptimizerOptions> clone() const override;
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  void validate() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  double lr_;
  double alpha_ = 0.99;
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_ = 0;
  bool centered_ = false;
};

class RMSpropParamState : public OptimizerParamState {
 public:
  int64_t step() const { return step_; }
  int64_t& step() { return step_; }
  RMSpropParamState& step(int64_t step) {
    step_ = step;
    return *this;
  }
  const Tensor& square_avg() const { return square_avg_; }
  Tensor& square_avg() { return square_avg_; }
  RMSpropParamState& square_avg(Tensor square_avg) {
    square_avg_ = std::move(square_avg);
    return *this;
  }
  /// Defined only with momentum > 0.
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  Tensor& momentum_buffer() { return momentum_buffer_; }
  RMSpropParamState& momentum_buffer(Tensor momentum_buffer) {
    momentum_buffer_ = std::move(momentum_buffer);
    return *this;
  }
  /// Defined only when centered.
  const Tensor& grad_avg() const { return grad_avg_; }
  Tensor& grad_avg() { return grad_avg_; }
  RMSpropParamState& grad_avg(Tensor grad_avg) {
    grad_avg_ = std::move(grad_avg);
    return *this;
  }

  std::unique_ptr<OptimizerParamState> clone() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  int64_t step_ = 0;
  Tensor square_avg_;
  Tensor momentum_buffer_;
  Tensor grad_avg_;
};

class RMSprop : public Optimizer {
 public:
  explicit RMSprop(std::vector<OptimizerParamGroup> param_groups,
                   RMSpropOptions defaults = {});
  explicit RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
  const char* name() const override { return "RMSprop"; }
};

}  // namespace tandem::optim
