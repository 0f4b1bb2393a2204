#include "optim/fused_steps.h"

#include "backend/dispatch.h"
#include "tandem/ops/factory.h"

namespace tandem::optim::detail {
namespace {

TensorOptions options_like(const Tensor& param) {
  return TensorOptions(param.dtype()).device(param.device());
}

// State tensors are made here or by load_state_dict, but state() lets a
// caller replace them, so they are checked like the gradient.
void check_state(const char* op,
                 const char* name,
                 const Tensor& state,
                 const Tensor& param) {
  TANDEM_CHECK(state.sizes() == param.sizes() && state.dtype() == param.dtype() &&
                   state.device() == param.device() && state.is_contiguous(),
               op,
               ": state '",
               name,
               "' (shape ",
               state.sizes(),
               ", ",
               state.dtype(),
               " on ",
               state.device(),
               ") does not match its parameter (shape ",
               param.sizes(),
               ", ",
               param.dtype(),
               " on ",
               param.device(),
               ") or is not contiguous");
}

// A state tensor for `param`: made filled with `fill` when it does not
// exist yet, else checked.
void ensure_state(const char* op,
                  const char* name,
                  Tensor& state,
                  const Tensor& param,
                  double fill = 0) {
  if (!state.defined()) {
    state = full(param.sizes(), fill, options_like(param));
    return;
  }
  check_state(op, name, state, param);
}

}  // namespace

void check_param_and_grad(const char* op, const Tensor& param, const Tensor& grad) {
  TANDEM_CHECK(grad.device() == param.device(),
               op,
               ": the gradient is on ",
               grad.device(),
               " but its parameter (shape ",
               param.sizes(),
               ") is on ",
               param.device());
  TANDEM_CHECK(grad.dtype() == param.dtype(),
               op,
               ": the gradient has dtype ",
               grad.dtype(),
               " but its parameter (shape ",
               param.sizes(),
               ") has dtype ",
               param.dtype());
  TANDEM_CHECK(grad.sizes() == param.sizes(),
               op,
               ": the gradient has shape ",
               grad.sizes(),
               " but its parameter has shape ",
               param.sizes());
  TANDEM_CHECK(param.dtype() == kFloat32 || param.dtype() == kFloat64,
               op,
               ": parameters must be float32 or float64, got ",
               param.dtype(),
               " (shape ",
               param.sizes(),
               ")");
  TANDEM_CHECK(param.is_contiguous(),
               op,
               ": the parameter of shape ",
               param.sizes(),
               " (strides ",
               param.strides(),
               ") is not contiguous; optimizers ",
               "update parameters in place over contiguous memory");
}

void sgd_step(const char* op,
              const Tensor& param,
              const Tensor& grad,
              Tensor& momentum_buffer,
              const SGDStepArgs& args) {
  check_param_and_grad(op, param, grad);
  const Tensor g = grad.contiguous();
  const bool first_step = args.momentum != 0 && !momentum_buffer.defined();
  if (first_step) momentum_buffer = empty(param.sizes(), options_like(param));
  if (args.momentum != 0) check_state(op, "momentum_buffer", momentum_buffer, param);
  const backend::SgdStepArgs step{args.lr,
                                  args.momentum,
                                  args.dampening,
                                  args.weight_decay,
                                  args.nesterov,
                                  first_step};
  backend::kernels(param.device())
      .sgd_step(param, g, args.momentum != 0 ? momentum_buffer : Tensor(), step);
  param.bump_version();
}

void adam_step(const char* op,
               const Tensor& param,
               const Tensor& grad,
               Tensor& exp_avg,
               Tensor& exp_avg_sq,
               Tensor& max_exp_avg_sq,
               const AdamStepArgs& args) {
  check_param_and_grad(op, param, grad);
  const Tensor g = grad.contiguous();
  ensure_state(op, "exp_avg", exp_avg, param);
  ensure_state(op, "exp_avg_sq", exp_avg_sq, param);
  if (args.amsgrad) ensure_state(op, "max_exp_avg_sq", max_exp_avg_sq, param);
  const backend::AdamStepArgs step{args.lr,
                                   args.beta1,
                                   args.beta2,
                                   args.eps,
                                   args.weight_decay,
                                   args.amsgrad,
                                   args.decoupled_weight_decay,
                                   args.step};
  backend::kernels(param.device())
      .adam_step(
          param, g, exp_avg, exp_avg_sq, args.amsgrad ? max_exp_avg_sq : Tensor(), step);
  param.bump_version();
}

void rmsprop_step(const char* op,
                  const Tensor& param,
                  const Tensor& grad,
                  Tensor& square_avg,
                  Tensor& momentum_buffer,
                  Tensor& grad_avg,
                  const RMSpropStepArgs& args) {
  check_param_and_grad(op, param, grad);
  const Tensor g = grad.contiguous();
  const bool with_momentum = args.momentum > 0;
  ensure_state(op, "square_avg", square_avg, param);
  if (with_momentum) ensure_state(op, "momentum_buffer", momentum_buffer, param);
  if (args.centered) ensure_state(op, "grad_avg", grad_avg, param);
  const backend::RmspropStepArgs step{
      args.lr, args.alpha, args.eps, args.weight_decay, args.momentum, args.centered};
  backend::kernels(param.device())
      .rmsprop_step(param,
                    g,
                    square_avg,
                    with_momentum ? momentum_buffer : Tensor(),
                    args.centered ? grad_avg : Tensor(),
                    step);
  param.bump_version();
}

void adagrad_step(const char* op,
                  const Tensor& param,
                  const Tensor& grad,
                  Tensor& sum,
                  const AdagradStepArgs& args) {
  check_param_and_grad(op, param, grad);
  const Tensor g = grad.contiguous();
  ensure_state(op, "sum", sum, param, args.initial_accumulator_value);
  const backend::AdagradStepArgs step{
      args.lr, args.lr_decay, args.weight_decay, args.eps, args.step};
  backend::kernels(param.device()).adagrad_step(param, g, sum, step);
  param.bump_version();
}

}  // namespace tandem::optim::detail
