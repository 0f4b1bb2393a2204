// SGD with momentum, dampening, Nesterov momentum and weight decay, with
// PyTorch's update rule (torch.optim.SGD):
//
//   d_p = grad + weight_decay * param
//   buf = d_p on the first step, then momentum * buf + (1 - dampening) * d_p
//   d_p = nesterov ? d_p + momentum * buf : buf        (when momentum != 0)
//   param -= lr * d_p
//
//   tandem::optim::SGD opt(model->parameters(),
//                          tandem::optim::SGDOptions(0.1).momentum(0.9).nesterov(true));
//   opt.zero_grad();
//   loss.backward();
//   opt.step();
#pragma once

#include <memory>
#include <vector>

#include "tandem/optim/optimizer.h"

namespace tandem::optim {

class SGDOptions : public OptimizerOptions {
 public:
  SGDOptions(double lr);  // implicit, so SGD(params, 0.1) works as in LibTorch

  double lr() const { return lr_; }
  SGDOptions& lr(double lr) {
    lr_ = lr;
    return *this;
  }
  double momentum() const { return momentum_; }
  SGDOptions& momentum(double momentum) {
    momentum_ = momentum;
    return *this;
  }
  double dampening() const { return dampening_; }
  SGDOptions& dampening(double dampening) {
    dampening_ = dampening;
    return *this;
  }
  double weight_decay() const { return weight_decay_; }
  SGDOptions& weight_decay(double weight_decay) {
    weight_decay_ = weight_decay;
    return *this;
  }
  bool nesterov() const { return nesterov_; }
  SGDOptions& nesterov(bool nesterov) {
    nesterov_ = nesterov;
    return *this;
  }

  std::unique_ptr<OptimizerOptions> clone() const override;
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  void validate() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  double lr_;
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
};

class SGDParamState : public OptimizerParamState {
 public:
  /// Undefined until the first step with momentum.
  const Tensor& momentum_buffer() const { return momentum_buffer_; }
  Tensor& momentum_buffer() { return momentum_buffer_; }
  SGDParamState& momentum_buffer(Tensor buffer) {
    momentum_buffer_ = std::move(buffer);
    return *this;
  }

  std::unique_ptr<OptimizerParamState> clone() const override;
  void visit_fields(FieldVisitor& visitor) override;

 private:
  Tensor momentum_buffer_;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults);

  Tensor step(LossClosure closure = nullptr) override;

 protected:
  std::unique_ptr<OptimizerParamState> make_param_state() const override;
  const char* name() const override { return "SGD"; }
};

}  // namespace tandem::optim
