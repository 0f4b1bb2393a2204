// Parameters as one flat vector and back, as LibTorch's
// torch::nn::utils::parameters_to_vector and vector_to_parameters.
//
//   tandem::Tensor flat = tandem::nn::utils::parameters_to_vector(model->parameters());
//   flat.mul_(0.5);
//   tandem::nn::utils::vector_to_parameters(flat, model->parameters());
#pragma once

#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::nn::utils {

/// The parameters flattened and concatenated in order into one 1-D tensor
/// (a copy). All must be on one device.
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);

/// Copies consecutive slices of the 1-D `vec` into the parameters, in
/// place and without recording autograd, so the parameters (and the
/// optimizers and replicas that hold them) stay the same tensors. `vec`
/// must have exactly as many elements as the parameters together.
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace tandem::nn::utils
