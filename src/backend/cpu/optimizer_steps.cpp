// The CPU optimizer steps of the kernel table (sgd_step, adam_step,
// rmsprop_step, adagrad_step): one
// pass over a parameter, its gradient and its state, in place, split over
// the calling device's share of cores. optim/fused_steps.cpp checks the
// operands and makes missing state before it calls them.
#include <cmath>
#include <type_traits>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/loops.h"

namespace tandem::backend::cpu {
namespace {

// Calls f with a value of the C++ type of `dtype` (float32 or float64).
template <typename F>
void dispatch_float(ScalarType dtype, F&& f) {
  if (dtype == kFloat32) {
    f(float{});
  } else {
    f(double{});
  }
}

// torch.maximum: NaN wins.
template <typename T>
T nan_max(T a, T b) {
  return (std::isnan(a) || a > b) ? a : b;
}

// Note [Rounding like PyTorch]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// PyTorch's single-tensor optimizers are chains of in-place tensor ops. Each
// op rounds its result to the tensor's dtype and takes its scalar argument
// (computed in double by Python) rounded to that dtype. The loops below keep
// that order with one statement per op and scalars cast once to T, so a
// float32 step rounds where PyTorch's does.

// Costs of one element's update, in cheap elementwise operations, for
// backend::cpu::parallel_over. An add in cache runs at ~0.1 ns per element;
// SGD with momentum over the MLP's parameters at 0.42 ns and Adam at 0.62 ns
// (BM_SgdStepMlpThreads, BM_AdamStepMlpThreads in bench/
// elementwise_bench.cpp). The costs stay below those ratios, so a parameter
// is split only where that surely pays. Each element's update is
// independent of the others, so the split changes no bit.
constexpr int64_t kSgdCost = 2;
constexpr int64_t kAdamCost = 6;
constexpr int64_t kRmspropCost = 6;
constexpr int64_t kAdagradCost = 4;

// Calls f with std::true_type or std::false_type: a flag known at run time
// becomes a template constant, so each loop below is branch-free and the
// compiler vectorizes it.
template <typename F>
void with_flag(bool flag, F&& f) {
  if (flag) {
    f(std::true_type{});
  } else {
    f(std::false_type{});
  }
}

template <typename T, bool kDecay, bool kMomentum, bool kFirstStep, bool kNesterov>
void sgd_loop(T* param, const T* grad, T* buf, int64_t n, const SgdStepArgs& args) {
  const T weight_decay = static_cast<T>(args.weight_decay);
  const T momentum = static_cast<T>(args.momentum);
  const T keep = static_cast<T>(1 - args.dampening);
  const T neg_lr = static_cast<T>(-args.lr);
  for (int64_t i = 0; i < n; ++i) {
    T d_p = grad[i];
    if constexpr (kDecay) d_p = d_p + weight_decay * param[i];
    if constexpr (kMomentum) {
      T b = d_p;
      if constexpr (!kFirstStep) b = buf[i] * momentum + keep * d_p;
      buf[i] = b;
      d_p = kNesterov ? d_p + momentum * b : b;
    }
    param[i] = param[i] + neg_lr * d_p;
  }
}

template <typename T, bool kL2Decay, bool kDecoupledDecay, bool kAmsgrad>
void adam_loop(T* param,
               const T* grad,
               T* exp_avg,
               T* exp_avg_sq,
               T* max_exp_avg_sq,
               int64_t n,
               const AdamStepArgs& args) {
  const auto step = static_cast<double>(args.step);
  const double bias_correction1 = 1 - std::pow(args.beta1, step);
  const double bias_correction2 = 1 - std::pow(args.beta2, step);
  const T neg_step_size = static_cast<T>(-(args.lr / bias_correction1));
  const T bias_correction2_sqrt = static_cast<T>(std::sqrt(bias_correction2));
  const T beta1 = static_cast<T>(args.beta1);
  const T beta2 = static_cast<T>(args.beta2);
  const T one_minus_beta1 = static_cast<T>(1 - args.beta1);
  const T one_minus_beta2 = static_cast<T>(1 - args.beta2);
  const T eps = static_cast<T>(args.eps);
  const T weight_decay = static_cast<T>(args.weight_decay);
  const T shrink = static_cast<T>(1 - args.lr * args.weight_decay);
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    T p = param[i];
    if constexpr (kDecoupledDecay) p = p * shrink;
    if constexpr (kL2Decay) g = g + weight_decay * p;
    T m = exp_avg[i] * beta1 + one_minus_beta1 * g;
    T v = exp_avg_sq[i] * beta2 + one_minus_beta2 * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    if constexpr (kAmsgrad) {
      v = nan_max(max_exp_avg_sq[i], v);
      max_exp_avg_sq[i] = v;
    }
    T denom = std::sqrt(v) / bias_correction2_sqrt + eps;
    param[i] = p + neg_step_size * m / denom;
  }
}

// RMSprop as torch.optim.RMSprop's single-tensor code: square_avg.mul_(alpha)
// .addcmul_(g, g, value=1 - alpha); the centered variant subtracts the
// squared running mean of g before the square root.
template <typename T, bool kDecay, bool kCentered, bool kMomentum>
void rmsprop_loop(T* param,
                  const T* grad,
                  T* square_avg,
                  T* momentum_buffer,
                  T* grad_avg,
                  int64_t n,
                  const RmspropStepArgs& args) {
  const T weight_decay = static_cast<T>(args.weight_decay);
  const T alpha = static_cast<T>(args.alpha);
  const T one_minus_alpha = static_cast<T>(1 - args.alpha);
  const T eps = static_cast<T>(args.eps);
  const T momentum = static_cast<T>(args.momentum);
  const T neg_lr = static_cast<T>(-args.lr);
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    if constexpr (kDecay) g = g + weight_decay * param[i];
    const T sq = square_avg[i] * alpha + one_minus_alpha * g * g;
    square_avg[i] = sq;
    T avg;
    if constexpr (kCentered) {
      const T mean = grad_avg[i] * alpha + one_minus_alpha * g;
      grad_avg[i] = mean;
      avg = std::sqrt(sq - mean * mean);
    } else {
      avg = std::sqrt(sq);
    }
    avg = avg + eps;
    if constexpr (kMomentum) {
      const T buf = momentum_buffer[i] * momentum + g / avg;
      momentum_buffer[i] = buf;
      param[i] = param[i] + neg_lr * buf;
    } else {
      param[i] = param[i] + neg_lr * g / avg;
    }
  }
}

// Adagrad as torch.optim.Adagrad's single-tensor code (dense gradients).
template <typename T, bool kDecay>
void adagrad_loop(
    T* param, const T* grad, T* sum, int64_t n, const AdagradStepArgs& args) {
  const double clr = args.lr / (1 + static_cast<double>(args.step - 1) * args.lr_decay);
  const T neg_clr = static_cast<T>(-clr);
  const T weight_decay = static_cast<T>(args.weight_decay);
  const T eps = static_cast<T>(args.eps);
  for (int64_t i = 0; i < n; ++i) {
    T g = grad[i];
    if constexpr (kDecay) g = g + weight_decay * param[i];
    const T s = sum[i] + g * g;
    sum[i] = s;
    const T std = std::sqrt(s) + eps;
    param[i] = param[i] + neg_clr * g / std;
  }
}

}  // namespace

void sgd_step(const Tensor& param,
              const Tensor& grad,
              const Tensor& momentum_buffer,
              const SgdStepArgs& args) {
  const Tensor& g = grad;
  dispatch_float(param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* buf = momentum_buffer.defined() ? momentum_buffer.data_ptr<T>() : nullptr;
    with_flag(args.weight_decay != 0, [&](auto decay) {
      with_flag(args.momentum != 0, [&](auto with_momentum) {
        with_flag(args.first_step, [&](auto first) {
          with_flag(args.nesterov, [&](auto nesterov) {
            parallel_over(param.numel(), kSgdCost, [&](int64_t begin, int64_t end) {
              sgd_loop<T,
                       decltype(decay)::value,
                       decltype(with_momentum)::value,
                       decltype(first)::value,
                       decltype(nesterov)::value>(param.data_ptr<T>() + begin,
                                                  g.data_ptr<T>() + begin,
                                                  buf ? buf + begin : nullptr,
                                                  end - begin,
                                                  args);
            });
          });
        });
      });
    });
  });
}

void adam_step(const Tensor& param,
               const Tensor& grad,
               const Tensor& exp_avg,
               const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq,
               const AdamStepArgs& args) {
  const Tensor& g = grad;
  dispatch_float(param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* max_sq = args.amsgrad ? max_exp_avg_sq.data_ptr<T>() : nullptr;
    with_flag(!args.decoupled_weight_decay && args.weight_decay != 0, [&](auto l2_decay) {
      with_flag(args.decoupled_weight_decay, [&](auto decoupled_decay) {
        with_flag(args.amsgrad, [&](auto amsgrad) {
          parallel_over(param.numel(), kAdamCost, [&](int64_t begin, int64_t end) {
            adam_loop<T,
                      decltype(l2_decay)::value,
                      decltype(decoupled_decay)::value,
                      decltype(amsgrad)::value>(param.data_ptr<T>() + begin,
                                                g.data_ptr<T>() + begin,
                                                exp_avg.data_ptr<T>() + begin,
                                                exp_avg_sq.data_ptr<T>() + begin,
                                                max_sq ? max_sq + begin : nullptr,
                                                end - begin,
                                                args);
          });
        });
      });
    });
  });
}

void rmsprop_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& square_avg,
                  const Tensor& momentum_buffer,
                  const Tensor& grad_avg,
                  const RmspropStepArgs& args) {
  dispatch_float(param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* buf = momentum_buffer.defined() ? momentum_buffer.data_ptr<T>() : nullptr;
    T* mean = grad_avg.defined() ? grad_avg.data_ptr<T>() : nullptr;
    with_flag(args.weight_decay != 0, [&](auto decay) {
      with_flag(mean != nullptr, [&](auto centered) {
        with_flag(buf != nullptr, [&](auto with_momentum) {
          parallel_over(param.numel(), kRmspropCost, [&](int64_t begin, int64_t end) {
            rmsprop_loop<T,
                         decltype(decay)::value,
                         decltype(centered)::value,
                         decltype(with_momentum)::value>(param.data_ptr<T>() + begin,
                                                         grad.data_ptr<T>() + begin,
                                                         square_avg.data_ptr<T>() + begin,
                                                         buf ? buf + begin : nullptr,
                                                         mean ? mean + begin : nullptr,
                                                         end - begin,
                                                         args);
          });
        });
      });
    });
  });
}

void adagrad_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& sum,
                  const AdagradStepArgs& args) {
  dispatch_float(param.dtype(), [&](auto zero) {
    using T = decltype(zero);
    with_flag(args.weight_decay != 0, [&](auto decay) {
      parallel_over(param.numel(), kAdagradCost, [&](int64_t begin, int64_t end) {
        adagrad_loop<T, decltype(decay)::value>(param.data_ptr<T>() + begin,
                                                grad.data_ptr<T>() + begin,
                                                sum.data_ptr<T>() + begin,
                                                end - begin,
                                                args);
      });
    });
  });
}

}  // namespace tandem::backend::cpu
