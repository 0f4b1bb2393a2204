// Private: the device table. One per device type, holding its kernels and
// its memory services; ops/ and the layers above look up the table for
// their operands' device and call through it. Kernels trust their
// arguments: ops/ has checked shapes, dtypes and devices, allocated
// outputs, and expanded broadcast inputs to the output shape (stride 0). A
// kernel family the device type lacks raises a clear error instead of
// crashing; the services are always complete (core/device_services.h).
//
//   backend::kernels(out.device()).binary(BinaryOp::Add, out, a, b);
//   backend::kernels(gpu).services.copy_bytes(dst, gpu, src, cpu, n, false);
#pragma once

#include <array>
#include <cstdint>
#include <optional>

#include "core/device_services.h"
#include "tandem/core/generator.h"
#include "tandem/core/tensor.h"

namespace tandem::backend {

enum class UnaryOp {
  Neg,
  Exp,
  Log,
  Sqrt,
  Abs,
  Relu,
  Sigmoid,
  Tanh,
  Gelu,
  GeluTanh,
  Sign,
  Reciprocal,
  Square,
  PowScalar,  // uses param a (the exponent)
  Clamp,      // clamp to [a, b] (NaN bound = none)
  AddScalar,
  MulScalar,  // x + a, x * a
  RsubScalar,
  RdivScalar,  // a - x, a / x
};

enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  // out = a + alpha * b, alpha in param
  AddScaled,
  // comparisons: out is bool, inputs any dtype
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  // autograd helpers: out = a * f'(b) for the named activation at b
  ReluBackward,
  SigmoidBackwardFromResult,
  TanhBackwardFromResult,
  GeluBackward,
  GeluTanhBackward,
};

enum class ReduceOp { Sum, Max, Min, ArgMax, ArgMin };

/// The pointwise activations of the activation kernels, with the meaning
/// of their two parameters (a, b); the formulas are in
/// backend/activation_math.h, shared by every backend.
enum class Activation {
  LeakyRelu,   // a: negative_slope
  Elu,         // a: alpha, b: scale (SELU is Elu with its constants)
  Silu,        // x * sigmoid(x)
  Mish,        // x * tanh(softplus(x))
  Softplus,    // a: beta, b: threshold
  Hardtanh,    // a: min_val, b: max_val
  LogSigmoid,  // log(sigmoid(x))
  Softsign,    // x / (1 + |x|)
};

/// What nll_loss_forward returns besides the per-sample losses.
struct NllLossSums {
  double loss = 0;    // sum of loss_i
  double weight = 0;  // sum of w[target[i]] over counted samples
};

/// The geometry of a 2-D convolution, as PyTorch's conv2d arguments (height
/// first); ops/ has checked it against the operands.
struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
  int64_t groups = 1;
};

/// The window of a 2-D pooling (height first). Padding counts as -inf for
/// max pooling and as 0 for average pooling.
struct Pool2dParams {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::array<int64_t, 2> dilation{1, 1};
};

/// How average pooling divides a window's sum.
struct AvgPoolDivisor {
  bool count_include_pad = true;  // padding cells count (else only input cells)
  int64_t divisor_override = 0;   // when non-zero: always this
};

/// One SGD step's hyper-parameters (PyTorch 1.13's single-tensor SGD).
struct SgdStepArgs {
  double lr = 0;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  /// The momentum buffer is new: it takes the (decayed) gradient, as
  /// PyTorch's clone, instead of being updated.
  bool first_step = false;
};

/// One Adam/AdamW step's hyper-parameters (PyTorch 1.13's single-tensor Adam).
struct AdamStepArgs {
  double lr = 0;
  double beta1 = 0;
  double beta2 = 0;
  double eps = 0;
  double weight_decay = 0;
  bool amsgrad = false;
  /// AdamW: weight decay shrinks the parameter instead of adding to the
  /// gradient.
  bool decoupled_weight_decay = false;
  /// The step number after this step's increment (1 on the first step).
  int64_t step = 0;
};

/// One RMSprop step's hyper-parameters (PyTorch 1.13's single-tensor
/// RMSprop).
struct RmspropStepArgs {
  double lr = 0;
  double alpha = 0;
  double eps = 0;
  double weight_decay = 0;
  double momentum = 0;
  bool centered = false;
};

/// One Adagrad step's hyper-parameters (PyTorch 1.13's single-tensor
/// Adagrad).
struct AdagradStepArgs {
  double lr = 0;
  double lr_decay = 0;
  double weight_decay = 0;
  double eps = 0;
  /// The step number after this step's increment (1 on the first step).
  int64_t step = 0;
};

/// A device type's table. A backend builds it with its services
/// (`Kernels k{.services = ...};`) and sets the kernels it has.
struct Kernels {
  /// The device type's memory services: the very object core's registry
  /// answers with (Note [Device services] in core/device_services.cpp).
  const detail::DeviceServices& services;
  // out <- src, converting dtype; shapes equal (src may be expanded)
  void (*copy)(const Tensor& out, const Tensor& src) = nullptr;
  void (*fill)(const Tensor& out, Scalar value) = nullptr;
  void (*unary)(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b) =
      nullptr;
  void (*binary)(BinaryOp op,
                 const Tensor& out,
                 const Tensor& a,
                 const Tensor& b,
                 Scalar param) = nullptr;
  // out = f(in) for the activation `kind` with parameters a, b; float32 and
  // float64, shapes equal (in may be expanded or be out itself)
  void (*activation)(
      Activation kind, const Tensor& out, const Tensor& in, double a, double b) = nullptr;
  // grad_in = grad_out * f'(in), shapes equal
  void (*activation_backward)(Activation kind,
                              const Tensor& grad_in,
                              const Tensor& grad_out,
                              const Tensor& in,
                              double a,
                              double b) = nullptr;
  // out = cond ? a : b
  void (*where)(const Tensor& out,
                const Tensor& cond,
                const Tensor& a,
                const Tensor& b) = nullptr;
  // Reduce contiguous `in` over `dim` into `out` (in's shape with dim
  // removed); ArgMax/ArgMin write int64 indices; Max/Min also write indices
  // when `indices` is defined.
  void (*reduce_dim)(ReduceOp op,
                     const Tensor& out,
                     const Tensor& indices,
                     const Tensor& in,
                     int64_t dim) = nullptr;
  // out[m,n] = beta*out + alpha * op(a) @ op(b) for 2-D float tensors whose
  // inner or outer stride is 1 (transposed views pass without copies)
  void (*gemm)(const Tensor& out,
               const Tensor& a,
               const Tensor& b,
               double alpha,
               double beta) = nullptr;
  // Batched: out[i] = a[i] @ b[i], 3-D operands
  void (*bmm)(const Tensor& out, const Tensor& a, const Tensor& b) = nullptr;
  // softmax / log_softmax over dim 1 of a contiguous [rows, n] or
  // [outer, n, inner] tensor
  void (*softmax)(const Tensor& out, const Tensor& in, bool log) = nullptr;
  // grad_in = softmax backward given grad_out and the forward result
  void (*softmax_backward)(const Tensor& grad_in,
                           const Tensor& grad_out,
                           const Tensor& result,
                           bool log) = nullptr;
  // out = in.index_select(dim, index); index int64, 1-D, in range
  void (*index_select)(const Tensor& out,
                       const Tensor& in,
                       int64_t dim,
                       const Tensor& index) = nullptr;
  // out.index_add_(dim, index, src) in place
  void (*index_add)(const Tensor& out,
                    int64_t dim,
                    const Tensor& index,
                    const Tensor& src) = nullptr;
  void (*gather)(const Tensor& out,
                 const Tensor& in,
                 int64_t dim,
                 const Tensor& index) = nullptr;
  // out.scatter_add_(dim, index, src) in place
  void (*scatter_add)(const Tensor& out,
                      int64_t dim,
                      const Tensor& index,
                      const Tensor& src) = nullptr;
  // Negative log-likelihood over contiguous input [N, C] (log-probabilities),
  // target [N] int64, weight [C] or undefined (all ones). For sample i with
  // class t = target[i] != ignore_index and label smoothing s:
  //   loss_i = -((1 - s) * w[t] * input[i, t] + s / C * sum_c w[c] * input[i, c])
  // and 0 for ignored samples. Writes loss_i into `losses` ([N]) when it is
  // defined and returns the sums; throws IndexError for a target outside
  // [0, C).
  NllLossSums (*nll_loss_forward)(const Tensor& losses,
                                  const Tensor& input,
                                  const Tensor& target,
                                  const Tensor& weight,
                                  double smoothing,
                                  int64_t ignore_index) = nullptr;
  // grad_input[i, c] = scale * grad_output[i] * d loss_i / d input[i, c];
  // grad_output is [N], or one element shared by every sample.
  void (*nll_loss_backward)(const Tensor& grad_input,
                            const Tensor& grad_output,
                            const Tensor& target,
                            const Tensor& weight,
                            double smoothing,
                            double scale,
                            int64_t ignore_index) = nullptr;
  // ---- convolution, pooling and normalisation (float32/float64) ----
  // Operands are contiguous; sizes agree with the params (ops/ computed the
  // output size). 2-D convolution of input [N, Cin, H, W] with weight
  // [Cout, Cin / groups, kh, kw], plus bias [Cout] when defined.
  void (*conv2d)(const Tensor& out,
                 const Tensor& input,
                 const Tensor& weight,
                 const Tensor& bias,
                 const Conv2dParams& params) = nullptr;
  // conv2d's gradients from grad_out [N, Cout, Ho, Wo]; overwrites each defined one.
  // input's values are read for grad_weight only (conv_transpose2d passes its output).
  void (*conv2d_backward)(const Tensor& grad_input,
                          const Tensor& grad_weight,
                          const Tensor& grad_bias,
                          const Tensor& grad_out,
                          const Tensor& input,
                          const Tensor& weight,
                          const Conv2dParams& params) = nullptr;
  // Max pooling of input [P, H, W] (P planes) into out [P, Ho, Wo]; indices
  // (int64, out's shape) get the argmax's offset within its plane (h * W +
  // w): the first maximum, or the last NaN (as PyTorch).
  void (*max_pool2d)(const Tensor& out,
                     const Tensor& indices,
                     const Tensor& input,
                     const Pool2dParams& params) = nullptr;
  // grad_input [P, H, W] = grad_out scattered (added) to the indices.
  void (*max_pool2d_backward)(const Tensor& grad_input,
                              const Tensor& grad_out,
                              const Tensor& indices) = nullptr;
  // Average pooling of input [P, H, W] into out [P, Ho, Wo] (dilation 1).
  void (*avg_pool2d)(const Tensor& out,
                     const Tensor& input,
                     const Pool2dParams& params,
                     AvgPoolDivisor divisor) = nullptr;
  void (*avg_pool2d_backward)(const Tensor& grad_input,
                              const Tensor& grad_out,
                              const Pool2dParams& params,
                              AvgPoolDivisor divisor) = nullptr;
  // Per-channel mean and biased variance of input [N, C, L] into [C].
  void (*batch_norm_stats)(const Tensor& mean,
                           const Tensor& var,
                           const Tensor& input) = nullptr;
  // out = (input - mean[c]) * invstd[c] * weight[c] + bias[c] over input
  // [N, C, L]; weight and bias may be undefined (1 and 0).
  void (*batch_norm_apply)(const Tensor& out,
                           const Tensor& input,
                           const Tensor& mean,
                           const Tensor& invstd,
                           const Tensor& weight,
                           const Tensor& bias) = nullptr;
  // batch_norm_apply's gradients, writing each defined one. `training`: mean
  // and invstd were the batch's own statistics (so they depend on input);
  // otherwise they were constants (running statistics).
  void (*batch_norm_backward)(const Tensor& grad_input,
                              const Tensor& grad_weight,
                              const Tensor& grad_bias,
                              const Tensor& grad_out,
                              const Tensor& input,
                              const Tensor& mean,
                              const Tensor& invstd,
                              const Tensor& weight,
                              bool training) = nullptr;
  // Normalises each row of input [M, N]: out = (x - mean) * rstd * weight +
  // bias (weight, bias [N] or undefined), writing mean and rstd ([M]).
  void (*layer_norm)(const Tensor& out,
                     const Tensor& mean,
                     const Tensor& rstd,
                     const Tensor& input,
                     const Tensor& weight,
                     const Tensor& bias,
                     double eps) = nullptr;
  void (*layer_norm_backward)(const Tensor& grad_input,
                              const Tensor& grad_weight,
                              const Tensor& grad_bias,
                              const Tensor& grad_out,
                              const Tensor& input,
                              const Tensor& mean,
                              const Tensor& rstd,
                              const Tensor& weight) = nullptr;
  // ---- recurrent cells (float32/float64), one time step of a batch ----
  // Contiguous gate rows [B, G * hidden] (gates side by side in PyTorch's
  // order) and states [B, hidden]; the formulas are in
  // backend/rnn_cell_math.h. lstm_cell reads the summed pre-activations in
  // `gates`, overwrites them with the activated gates and writes h and c.
  void (*lstm_cell)(const Tensor& gates,
                    const Tensor& c_prev,
                    const Tensor& h,
                    const Tensor& c) = nullptr;
  // From grad_h and grad_c (undefined: zero) writes the pre-activation
  // gates' gradient and c_prev's.
  void (*lstm_cell_backward)(const Tensor& grad_gates,
                             const Tensor& grad_c_prev,
                             const Tensor& grad_h,
                             const Tensor& grad_c,
                             const Tensor& gates,
                             const Tensor& c_prev,
                             const Tensor& c) = nullptr;
  // GRU: input_gates (x W_ih^T + b_ih) are overwritten with r, z, n;
  // hidden_gates (h_prev W_hh^T + b_hh) are read; writes h.
  void (*gru_cell)(const Tensor& input_gates,
                   const Tensor& hidden_gates,
                   const Tensor& h_prev,
                   const Tensor& h) = nullptr;
  // Writes both gate gradients and adds h_prev's direct share into
  // grad_h_prev.
  void (*gru_cell_backward)(const Tensor& grad_input_gates,
                            const Tensor& grad_hidden_gates,
                            const Tensor& grad_h_prev,
                            const Tensor& grad_h,
                            const Tensor& gates,
                            const Tensor& hidden_gates,
                            const Tensor& h_prev) = nullptr;
  // random fills; uniform in [from, to), normal, integers in [low, high),
  // bernoulli(p) as 0/1 in out's dtype
  void (*uniform)(const Tensor& out, double from, double to, Generator& gen) = nullptr;
  void (*normal)(const Tensor& out, double mean, double std, Generator& gen) = nullptr;
  void (*randint)(const Tensor& out, int64_t low, int64_t high, Generator& gen) = nullptr;
  void (*bernoulli)(const Tensor& out, double p, Generator& gen) = nullptr;
  // bernoulli(p) keyed by sample, into a contiguous `out` seen as [outer,
  // rows, inner] around `dim`: row r is sample first_row + r of the whole
  // batch, and each element's bits depend on `key`, that sample and the
  // element's place in it only (Note [Sample-keyed masks])
  void (*bernoulli_keyed)(const Tensor& out,
                          double p,
                          uint64_t key,
                          int64_t first_row,
                          int64_t dim) = nullptr;
  // ---- optimizer steps, in place on contiguous float tensors of one
  // shape and dtype (undefined state tensors: that feature is off) ----
  void (*sgd_step)(const Tensor& param,
                   const Tensor& grad,
                   const Tensor& momentum_buffer,
                   const SgdStepArgs& args) = nullptr;
  void (*adam_step)(const Tensor& param,
                    const Tensor& grad,
                    const Tensor& exp_avg,
                    const Tensor& exp_avg_sq,
                    const Tensor& max_exp_avg_sq,
                    const AdamStepArgs& args) = nullptr;
  void (*rmsprop_step)(const Tensor& param,
                       const Tensor& grad,
                       const Tensor& square_avg,
                       const Tensor& momentum_buffer,
                       const Tensor& grad_avg,
                       const RmspropStepArgs& args) = nullptr;
  void (*adagrad_step)(const Tensor& param,
                       const Tensor& grad,
                       const Tensor& sum,
                       const AdagradStepArgs& args) = nullptr;
};

/// The table of `device`'s type; throws when tandem was built without it.
const Kernels& kernels(Device device);

}  // namespace tandem::backend

namespace tandem::backend::cpu {
const Kernels& cpu_kernels();
}  // namespace tandem::backend::cpu
