// Gradient clipping, as LibTorch's torch::nn::utils::clip_grad_norm_ and
// clip_grad_value_ (PyTorch 1.13's rules): both change the gradients of the
// given parameters in place and skip parameters without a gradient.
//
//   loss.backward();
//   double norm = tandem::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
//   tandem::nn::utils::clip_grad_value_(model->parameters(), 1.0);
//   optimizer.step();
#pragma once

#include <initializer_list>
#include <limits>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::nn::utils {

/// Scales the gradients so that their norm, taken over all of them together
/// as if concatenated into one vector, is at most `max_norm`: every gradient
/// is multiplied by min(1, max_norm / (total_norm + 1e-6)). `norm_type` is
/// the p of the p-norm; infinity (std::numeric_limits<double>::infinity())
/// takes the largest absolute value. Returns the total norm before clipping.
/// With error_if_nonfinite, a NaN or infinite total norm throws and leaves
/// the gradients alone.
double clip_grad_norm_(const std::vector<Tensor>& parameters,
                       double max_norm,
                       double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(std::initializer_list<Tensor> parameters,
                       double max_norm,
                       double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter,
                       double max_norm,
                       double norm_type = 2.0,
                       bool error_if_nonfinite = false);

/// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(std::initializer_list<Tensor> parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace tandem::nn::utils
