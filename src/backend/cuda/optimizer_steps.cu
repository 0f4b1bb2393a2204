// CUDA fused optimizer steps: one kernel per SGD, Adam/AdamW, RMSprop or
// Adagrad step, in
// place on contiguous float32/float64 tensors, doing the op-by-op math of
// backend/cpu/optimizer_steps.cpp (see Note [Rounding like PyTorch] there): the
// scalar factors are computed in double on the host and cast once to the
// parameter's dtype, and every operation rounds to that dtype in the same
// order. The _rn intrinsics keep nvcc from fusing a multiply and an add, so
// a step matches the CPU's bit for bit.
#include <cmath>

#include "backend/cuda/cuda_kernels.h"
#include "backend/cuda/loops.cuh"

namespace tandem::backend::cuda {
namespace {

__device__ __forceinline__ float mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double div(double a, double b) { return __ddiv_rn(a, b); }
__device__ __forceinline__ float root(float a) { return __fsqrt_rn(a); }
__device__ __forceinline__ double root(double a) { return __dsqrt_rn(a); }

// torch.maximum: NaN wins.
template <typename T>
__device__ __forceinline__ T nan_max(T a, T b) {
  return (a != a || a > b) ? a : b;
}

template <typename T>
struct SgdScalars {
  T weight_decay;
  T momentum;
  T keep;  // 1 - dampening
  T neg_lr;
  bool decay;
  bool first_step;
  bool nesterov;
};

// One element of an SGD step; buf is null without momentum.
template <typename T>
__device__ __forceinline__ void sgd_update(const SgdScalars<T>& s,
                                           T& param,
                                           T grad,
                                           T* buf) {
  T d_p = grad;
  if (s.decay) d_p = add(d_p, mul(s.weight_decay, param));
  if (buf != nullptr) {
    T b = d_p;
    if (!s.first_step) b = add(mul(*buf, s.momentum), mul(s.keep, d_p));
    *buf = b;
    d_p = s.nesterov ? add(d_p, mul(s.momentum, b)) : b;
  }
  param = add(param, mul(s.neg_lr, d_p));
}

template <typename T>
struct AdamScalars {
  T neg_step_size;  // -lr / bias_correction1
  T bias_correction2_sqrt;
  T beta1;
  T beta2;
  T one_minus_beta1;
  T one_minus_beta2;
  T eps;
  T weight_decay;
  T shrink;  // 1 - lr * weight_decay (AdamW)
  bool l2_decay;
  bool decoupled_decay;
};

// One element of an Adam step; max_sq is null without amsgrad.
template <typename T>
__device__ __forceinline__ void adam_update(
    const AdamScalars<T>& s, T& param, T grad, T& exp_avg, T& exp_avg_sq, T* max_sq) {
  T g = grad;
  T p = param;
  if (s.decoupled_decay) p = mul(p, s.shrink);
  if (s.l2_decay) g = add(g, mul(s.weight_decay, p));
  const T m = add(mul(exp_avg, s.beta1), mul(s.one_minus_beta1, g));
  T v = add(mul(exp_avg_sq, s.beta2), mul(mul(s.one_minus_beta2, g), g));
  exp_avg = m;
  exp_avg_sq = v;
  if (max_sq != nullptr) {
    v = nan_max(*max_sq, v);
    *max_sq = v;
  }
  const T denom = add(div(root(v), s.bias_correction2_sqrt), s.eps);
  param = add(p, div(mul(s.neg_step_size, m), denom));
}

template <typename T>
struct RmspropScalars {
  T weight_decay;
  T alpha;
  T one_minus_alpha;
  T eps;
  T momentum;
  T neg_lr;
  bool decay;
};

// One element of an RMSprop step; buf is null without momentum, mean null
// unless centered.
template <typename T>
__device__ __forceinline__ void rmsprop_update(
    const RmspropScalars<T>& s, T& param, T grad, T& square_avg, T* buf, T* mean) {
  T g = grad;
  if (s.decay) g = add(g, mul(s.weight_decay, param));
  const T sq = add(mul(square_avg, s.alpha), mul(mul(s.one_minus_alpha, g), g));
  square_avg = sq;
  T avg;
  if (mean != nullptr) {
    const T m = add(mul(*mean, s.alpha), mul(s.one_minus_alpha, g));
    *mean = m;
    avg = root(add(sq, -mul(m, m)));
  } else {
    avg = root(sq);
  }
  avg = add(avg, s.eps);
  if (buf != nullptr) {
    const T b = add(mul(*buf, s.momentum), div(g, avg));
    *buf = b;
    param = add(param, mul(s.neg_lr, b));
  } else {
    param = add(param, div(mul(s.neg_lr, g), avg));
  }
}

template <typename T>
struct AdagradScalars {
  T neg_clr;  // -lr / (1 + (step - 1) * lr_decay)
  T weight_decay;
  T eps;
  bool decay;
};

template <typename T>
__device__ __forceinline__ void adagrad_update(const AdagradScalars<T>& s,
                                               T& param,
                                               T grad,
                                               T& sum) {
  T g = grad;
  if (s.decay) g = add(g, mul(s.weight_decay, param));
  const T acc = add(sum, mul(g, g));
  sum = acc;
  const T std = add(root(acc), s.eps);
  param = add(param, div(mul(s.neg_clr, g), std));
}

template <typename T>
void sgd_typed(cudaStream_t stream,
               const Tensor& param,
               const Tensor& grad,
               const Tensor& momentum_buffer,
               const SgdStepArgs& args) {
  const SgdScalars<T> s{static_cast<T>(args.weight_decay),
                        static_cast<T>(args.momentum),
                        static_cast<T>(1 - args.dampening),
                        static_cast<T>(-args.lr),
                        args.weight_decay != 0,
                        args.first_step,
                        args.nesterov};
  const int64_t n = param.numel();
  const T* grad_data = grad.data_ptr<T>();
  if (momentum_buffer.defined()) {
    for_each_flat(
        stream,
        "sgd_step",
        n,
        [s] __device__(T & p, const T& g, T& buf) { sgd_update(s, p, g, &buf); },
        param.data_ptr<T>(),
        grad_data,
        momentum_buffer.data_ptr<T>());
  } else {
    for_each_flat(
        stream,
        "sgd_step",
        n,
        [s] __device__(T & p, const T& g) { sgd_update<T>(s, p, g, nullptr); },
        param.data_ptr<T>(),
        grad_data);
  }
}

template <typename T>
void adam_typed(cudaStream_t stream,
                const Tensor& param,
                const Tensor& grad,
                const Tensor& exp_avg,
                const Tensor& exp_avg_sq,
                const Tensor& max_exp_avg_sq,
                const AdamStepArgs& args) {
  const auto step = static_cast<double>(args.step);
  const double bias_correction1 = 1 - std::pow(args.beta1, step);
  const double bias_correction2 = 1 - std::pow(args.beta2, step);
  const bool decoupled = args.decoupled_weight_decay && args.weight_decay != 0;
  const AdamScalars<T> s{static_cast<T>(-(args.lr / bias_correction1)),
                         static_cast<T>(std::sqrt(bias_correction2)),
                         static_cast<T>(args.beta1),
                         static_cast<T>(args.beta2),
                         static_cast<T>(1 - args.beta1),
                         static_cast<T>(1 - args.beta2),
                         static_cast<T>(args.eps),
                         static_cast<T>(args.weight_decay),
                         static_cast<T>(1 - args.lr * args.weight_decay),
                         !args.decoupled_weight_decay && args.weight_decay != 0,
                         decoupled};
  const int64_t n = param.numel();
  const T* grad_data = grad.data_ptr<T>();
  if (max_exp_avg_sq.defined()) {
    for_each_flat(
        stream,
        "adam_step",
        n,
        [s] __device__(T & p, const T& g, T& m, T& v, T& max_sq) {
          adam_update(s, p, g, m, v, &max_sq);
        },
        param.data_ptr<T>(),
        grad_data,
        exp_avg.data_ptr<T>(),
        exp_avg_sq.data_ptr<T>(),
        max_exp_avg_sq.data_ptr<T>());
  } else {
    for_each_flat(
        stream,
        "adam_step",
        n,
        [s] __device__(T & p, const T& g, T& m, T& v) {
          adam_update<T>(s, p, g, m, v, nullptr);
        },
        param.data_ptr<T>(),
        grad_data,
        exp_avg.data_ptr<T>(),
        exp_avg_sq.data_ptr<T>());
  }
}

template <typename T>
void rmsprop_typed(cudaStream_t stream,
                   const Tensor& param,
                   const Tensor& grad,
                   const Tensor& square_avg,
                   const Tensor& momentum_buffer,
                   const Tensor& grad_avg,
                   const RmspropStepArgs& args) {
  const RmspropScalars<T> s{static_cast<T>(args.weight_decay),
                            static_cast<T>(args.alpha),
                            static_cast<T>(1 - args.alpha),
                            static_cast<T>(args.eps),
                            static_cast<T>(args.momentum),
                            static_cast<T>(-args.lr),
                            args.weight_decay != 0};
  const int64_t n = param.numel();
  T* param_data = param.data_ptr<T>();
  const T* grad_data = grad.data_ptr<T>();
  T* square_data = square_avg.data_ptr<T>();
  const bool with_momentum = momentum_buffer.defined();
  const bool centered = grad_avg.defined();
  if (with_momentum && centered) {
    for_each_flat(
        stream,
        "rmsprop_step",
        n,
        [s] __device__(T & p, const T& g, T& sq, T& buf, T& mean) {
          rmsprop_update(s, p, g, sq, &buf, &mean);
        },
        param_data,
        grad_data,
        square_data,
        momentum_buffer.data_ptr<T>(),
        grad_avg.data_ptr<T>());
  } else if (with_momentum) {
    for_each_flat(
        stream,
        "rmsprop_step",
        n,
        [s] __device__(T & p, const T& g, T& sq, T& buf) {
          rmsprop_update<T>(s, p, g, sq, &buf, nullptr);
        },
        param_data,
        grad_data,
        square_data,
        momentum_buffer.data_ptr<T>());
  } else if (centered) {
    for_each_flat(
        stream,
        "rmsprop_step",
        n,
        [s] __device__(T & p, const T& g, T& sq, T& mean) {
          rmsprop_update<T>(s, p, g, sq, nullptr, &mean);
        },
        param_data,
        grad_data,
        square_data,
        grad_avg.data_ptr<T>());
  } else {
    for_each_flat(
        stream,
        "rmsprop_step",
        n,
        [s] __device__(T & p, const T& g, T& sq) {
          rmsprop_update<T>(s, p, g, sq, nullptr, nullptr);
        },
        param_data,
        grad_data,
        square_data);
  }
}

template <typename T>
void adagrad_typed(cudaStream_t stream,
                   const Tensor& param,
                   const Tensor& grad,
                   const Tensor& sum,
                   const AdagradStepArgs& args) {
  const double clr = args.lr / (1 + static_cast<double>(args.step - 1) * args.lr_decay);
  const AdagradScalars<T> s{static_cast<T>(-clr),
                            static_cast<T>(args.weight_decay),
                            static_cast<T>(args.eps),
                            args.weight_decay != 0};
  for_each_flat(
      stream,
      "adagrad_step",
      param.numel(),
      [s] __device__(T & p, const T& g, T& acc) { adagrad_update(s, p, g, acc); },
      param.data_ptr<T>(),
      grad.data_ptr<T>(),
      sum.data_ptr<T>());
}

}  // namespace

void sgd_step(const Tensor& param,
              const Tensor& grad,
              const Tensor& momentum_buffer,
              const SgdStepArgs& args) {
  cudaStream_t stream = prepare(param);
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(param.is_contiguous() && grad.is_contiguous(),
                                    "sgd_step: non-contiguous operands");
  dispatch_floating(param.dtype(), "sgd_step", [&]<typename T>() {
    sgd_typed<T>(stream, param, grad, momentum_buffer, args);
  });
}

void adam_step(const Tensor& param,
               const Tensor& grad,
               const Tensor& exp_avg,
               const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq,
               const AdamStepArgs& args) {
  cudaStream_t stream = prepare(param);
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(param.is_contiguous() && grad.is_contiguous(),
                                    "adam_step: non-contiguous operands");
  dispatch_floating(param.dtype(), "adam_step", [&]<typename T>() {
    adam_typed<T>(stream, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, args);
  });
}

void rmsprop_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& square_avg,
                  const Tensor& momentum_buffer,
                  const Tensor& grad_avg,
                  const RmspropStepArgs& args) {
  cudaStream_t stream = prepare(param);
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(param.is_contiguous() && grad.is_contiguous(),
                                    "rmsprop_step: non-contiguous operands");
  dispatch_floating(param.dtype(), "rmsprop_step", [&]<typename T>() {
    rmsprop_typed<T>(stream, param, grad, square_avg, momentum_buffer, grad_avg, args);
  });
}

void adagrad_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& sum,
                  const AdagradStepArgs& args) {
  cudaStream_t stream = prepare(param);
  TANDEM_INTERNAL_ASSERT_DEBUG_ONLY(param.is_contiguous() && grad.is_contiguous(),
                                    "adagrad_step: non-contiguous operands");
  dispatch_floating(param.dtype(), "adagrad_step", [&]<typename T>() {
    adagrad_typed<T>(stream, param, grad, sum, args);
  });
}

}  // namespace tandem::backend::cuda
