// Padding variable-length sequences into one batch, as LibTorch's
// torch::nn::utils::rnn::pad_sequence (PyTorch 1.13's rules).
//
//   // three sentences of 5, 3 and 4 steps, 16 features each
//   auto batch = tandem::nn::utils::rnn::pad_sequence({a, b, c});      // [5, 3, 16]
//   auto first = tandem::nn::utils::rnn::pad_sequence({a, b, c}, true); // [3, 5, 16]
//
// Packed sequences (pack_padded_sequence, PackedSequence) are not here:
// tandem's recurrent layers run every step of the padded batch, so a
// program masks the padded steps' outputs (or gathers each sequence's last
// step) instead.
#pragma once

#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::nn::utils::rnn {

/// Stacks `sequences` ([L_i, *] each, with the same trailing sizes, dtype
/// and device) into [max L_i, B, *], or [B, max L_i, *] when batch_first,
/// filling the steps past each sequence's end with `padding_value`.
/// Differentiable in every sequence.
Tensor pad_sequence(const std::vector<Tensor>& sequences,
                    bool batch_first = false,
                    double padding_value = 0.0);

}  // namespace tandem::nn::utils::rnn
