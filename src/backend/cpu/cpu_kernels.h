// Private: the CPU kernels, one family per file (elementwise.cpp, copy.cpp,
// reduction.cpp, matmul.cpp, softmax.cpp, indexing.cpp, random.cpp,
// conv.cpp, pooling.cpp, normalization.cpp, optimizer_steps.cpp,
// rnn_cell.cpp). The
// signatures are those of backend::Kernels; see dispatch.h for contracts.
#pragma once

#include "backend/dispatch.h"

namespace tandem::backend::cpu {

void copy(const Tensor& out, const Tensor& src);
void fill(const Tensor& out, Scalar value);
void unary(UnaryOp op, const Tensor& out, const Tensor& in, Scalar a, Scalar b);
void binary(
    BinaryOp op, const Tensor& out, const Tensor& a, const Tensor& b, Scalar param);
void activation(Activation kind, const Tensor& out, const Tensor& in, double a, double b);
void activation_backward(Activation kind,
                         const Tensor& grad_in,
                         const Tensor& grad_out,
                         const Tensor& in,
                         double a,
                         double b);
void where(const Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b);
void reduce_dim(
    ReduceOp op, const Tensor& out, const Tensor& indices, const Tensor& in, int64_t dim);
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta);
void bmm(const Tensor& out, const Tensor& a, const Tensor& b);
void softmax(const Tensor& out, const Tensor& in, bool log);
void softmax_backward(const Tensor& grad_in,
                      const Tensor& grad_out,
                      const Tensor& result,
                      bool log);
NllLossSums nll_loss_forward(const Tensor& losses,
                             const Tensor& input,
                             const Tensor& target,
                             const Tensor& weight,
                             double smoothing,
                             int64_t ignore_index);
void nll_loss_backward(const Tensor& grad_input,
                       const Tensor& grad_output,
                       const Tensor& target,
                       const Tensor& weight,
                       double smoothing,
                       double scale,
                       int64_t ignore_index);
void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index);
void index_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index);
void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);
void conv2d(const Tensor& out,
            const Tensor& input,
            const Tensor& weight,
            const Tensor& bias,
            const Conv2dParams& params);
void conv2d_backward(const Tensor& grad_input,
                     const Tensor& grad_weight,
                     const Tensor& grad_bias,
                     const Tensor& grad_out,
                     const Tensor& input,
                     const Tensor& weight,
                     const Conv2dParams& params);
void max_pool2d(const Tensor& out,
                const Tensor& indices,
                const Tensor& input,
                const Pool2dParams& params);
void max_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Tensor& indices);
void avg_pool2d(const Tensor& out,
                const Tensor& input,
                const Pool2dParams& params,
                AvgPoolDivisor divisor);
void avg_pool2d_backward(const Tensor& grad_input,
                         const Tensor& grad_out,
                         const Pool2dParams& params,
                         AvgPoolDivisor divisor);
void batch_norm_stats(const Tensor& mean, const Tensor& var, const Tensor& input);
void batch_norm_apply(const Tensor& out,
                      const Tensor& input,
                      const Tensor& mean,
                      const Tensor& invstd,
                      const Tensor& weight,
                      const Tensor& bias);
void batch_norm_backward(const Tensor& grad_input,
                         const Tensor& grad_weight,
                         const Tensor& grad_bias,
                         const Tensor& grad_out,
                         const Tensor& input,
                         const Tensor& mean,
                         const Tensor& invstd,
                         const Tensor& weight,
                         bool training);
void layer_norm(const Tensor& out,
                const Tensor& mean,
                const Tensor& rstd,
                const Tensor& input,
                const Tensor& weight,
                const Tensor& bias,
                double eps);
void layer_norm_backward(const Tensor& grad_input,
                         const Tensor& grad_weight,
                         const Tensor& grad_bias,
                         const Tensor& grad_out,
                         const Tensor& input,
                         const Tensor& mean,
                         const Tensor& rstd,
                         const Tensor& weight);
void lstm_cell(const Tensor& gates,
               const Tensor& c_prev,
               const Tensor& h,
               const Tensor& c);
void lstm_cell_backward(const Tensor& grad_gates,
                        const Tensor& grad_c_prev,
                        const Tensor& grad_h,
                        const Tensor& grad_c,
                        const Tensor& gates,
                        const Tensor& c_prev,
                        const Tensor& c);
void gru_cell(const Tensor& input_gates,
              const Tensor& hidden_gates,
              const Tensor& h_prev,
              const Tensor& h);
void gru_cell_backward(const Tensor& grad_input_gates,
                       const Tensor& grad_hidden_gates,
                       const Tensor& grad_h_prev,
                       const Tensor& grad_h,
                       const Tensor& gates,
                       const Tensor& hidden_gates,
                       const Tensor& h_prev);
void uniform(const Tensor& out, double from, double to, Generator& gen);
void normal(const Tensor& out, double mean, double std, Generator& gen);
void randint(const Tensor& out, int64_t low, int64_t high, Generator& gen);
void bernoulli(const Tensor& out, double p, Generator& gen);
void bernoulli_keyed(
    const Tensor& out, double p, uint64_t key, int64_t first_row, int64_t dim);
void sgd_step(const Tensor& param,
              const Tensor& grad,
              const Tensor& momentum_buffer,
              const SgdStepArgs& args);
void adam_step(const Tensor& param,
               const Tensor& grad,
               const Tensor& exp_avg,
               const Tensor& exp_avg_sq,
               const Tensor& max_exp_avg_sq,
               const AdamStepArgs& args);
void rmsprop_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& square_avg,
                  const Tensor& momentum_buffer,
                  const Tensor& grad_avg,
                  const RmspropStepArgs& args);
void adagrad_step(const Tensor& param,
                  const Tensor& grad,
                  const Tensor& sum,
                  const AdagradStepArgs& args);

}  // namespace tandem::backend::cpu
