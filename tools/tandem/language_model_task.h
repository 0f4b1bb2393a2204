// `tandem train --model lstm-lm`: a word-level LSTM language model on the
// King James Bible (data::datasets::KingJamesBible; --data names a file of
// verses instead), as PyTorch's word_language_model example trains it:
// embedding and 2 LSTM layers of 200, the decoder tied to the embedding,
// dropout 0.2, truncated backprop through time over 35 tokens, gradients
// clipped to norm 0.25, plain SGD from lr 20 divided by 4 whenever the
// validation loss stops falling (--lr-schedule plateau, the default here).
//
// The training tokens stand in --batch-size contiguous columns, read 35
// rows (one segment, one step) at a time; the LSTM state runs on from one
// segment to the next, its history cut, and a checkpoint keeps it, so a
// resumed run goes on from the same state. DataParallel cuts the columns
// and the state over --devices (dim 1, time-major). Scores: the validation
// loss and perplexity after every epoch, the test perplexity at the end.
#pragma once

#include <memory>

#include "training_task.h"

namespace tandem::cli {

std::unique_ptr<TrainingTask> make_language_model_task(const TrainConfig& config);

}  // namespace tandem::cli
