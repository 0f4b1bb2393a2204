// tandem::nn::utils: gradient clipping, flat parameter vectors and padded
// sequences, as LibTorch's torch/nn/utils.h.
//
//   tandem::nn::utils::clip_grad_norm_(model->parameters(), /*max_norm=*/0.25);
#pragma once

#include "tandem/nn/utils/clip_grad.h"
#include "tandem/nn/utils/convert_parameters.h"
#include "tandem/nn/utils/rnn.h"
