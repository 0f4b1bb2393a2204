// Fused per-parameter updates of SGD, Adam/AdamW, RMSprop and Adagrad: one
// pass over the
// contiguous float32/float64 data of a parameter, its gradient and its state,
// in place, without temporaries, split across the calling device's threads
// when the parameter is large (each element's update is independent, so the
// result does not depend on the thread count). They follow PyTorch 1.13's
// single-tensor code operation by operation (each op rounds to the
// parameter's dtype, and scalar factors are computed in double and then
// rounded), so results match PyTorch's to the last bits or nearly.
//
// These check the operands and make missing state; the loops themselves are
// the device's kernels (backend/cpu/optimizer_steps.cpp, backend/cuda/).
// The callers (SGD::step, Adam::step, ...) run them under
// NoGradGuard; they bump the parameter's version counter.
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::optim::detail {

/// Throws unless `param` is a contiguous float32/float64 CPU tensor and
/// `grad` has its shape, dtype and device. `op` names the optimizer.
void check_param_and_grad(const char* op, const Tensor& param, const Tensor& grad);

struct SGDStepArgs {
  double lr;
  double momentum;
  double dampening;
  double weight_decay;
  bool nesterov;
};

/// One SGD step. With momentum, an undefined `momentum_buffer` is created
/// (holding the first step's gradient, as PyTorch's clone).
void sgd_step(const char* op,
              const Tensor& param,
              const Tensor& grad,
              Tensor& momentum_buffer,
              const SGDStepArgs& args);

struct AdamStepArgs {
  double lr;
  double beta1;
  double beta2;
  double eps;
  double weight_decay;
  bool amsgrad;
  /// AdamW: weight decay shrinks the parameter instead of adding to the
  /// gradient.
  bool decoupled_weight_decay;
  /// The step number after this step's increment (1 on the first step).
  int64_t step;
};

/// One Adam/AdamW step; undefined moment tensors are created as zeros
/// (max_exp_avg_sq only with amsgrad).
void adam_step(const char* op,
               const Tensor& param,
               const Tensor& grad,
               Tensor& exp_avg,
               Tensor& exp_avg_sq,
               Tensor& max_exp_avg_sq,
               const AdamStepArgs& args);

struct RMSpropStepArgs {
  double lr;
  double alpha;
  double eps;
  double weight_decay;
  double momentum;
  bool centered;
};

/// One RMSprop step; undefined state tensors are created as zeros
/// (momentum_buffer only with momentum > 0, grad_avg only when centered).
void rmsprop_step(const char* op,
                  const Tensor& param,
                  const Tensor& grad,
                  Tensor& square_avg,
                  Tensor& momentum_buffer,
                  Tensor& grad_avg,
                  const RMSpropStepArgs& args);

struct AdagradStepArgs {
  double lr;
  double lr_decay;
  double weight_decay;
  double eps;
  /// The step number after this step's increment (1 on the first step).
  int64_t step;
  /// What an undefined `sum` starts from.
  double initial_accumulator_value;
};

/// One Adagrad step; an undefined `sum` is created filled with
/// initial_accumulator_value.
void adagrad_step(const char* op,
                  const Tensor& param,
                  const Tensor& grad,
                  Tensor& sum,
                  const AdagradStepArgs& args);

}  // namespace tandem::optim::detail
