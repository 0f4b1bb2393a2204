// tandem::nn::utils: gradient clipping and flat parameter vectors, as
// LibTorch's torch/nn/utils.h.
//
//   tandem::nn::utils::clip_grad_norm_(model->parameters(), /*max_norm=*/0.25);
#pragma once

#include "tandem/nn/utils/clip_grad.h"
#include "tandem/nn/utils/convert_parameters.h"
