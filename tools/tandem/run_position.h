// Where a `tandem train` run stands, as its checkpoint records it: the
// counters in the checkpoint's own fields (epoch, batch, step), the epoch's
// loss so far and the skipped steps in its extras, read back with every
// value checked against the run that resumes it.
//
//   record_position(position, checkpoint);           // saving
//   Position p = resumed_position(checkpoint, path, epochs, batches);
#pragma once

#include <cstdint>
#include <string>

#include "tandem/io/checkpoint.h"

namespace tandem::cli {

// The next batch to train is `batch` of `epoch` (from 0); the epoch's
// batches so far had losses summing to `loss_sum` over `samples`.
struct Position {
  int64_t epoch = 0;
  int64_t batch = 0;
  int64_t step = 0;  // training steps taken in all, one per batch
  double loss_sum = 0;
  int64_t samples = 0;
  int64_t skipped = 0;  // steps in all whose update a non-finite loss skipped
};

/// Writes `position` into `checkpoint` (fields and extras).
void record_position(const Position& position, io::Checkpoint& checkpoint);

/// Where `checkpoint` (read from `path`, named in errors) stopped, for a run
/// of `epochs` epochs of `batches` batches: tandem::Error naming the field
/// and its value for a value that is no number, out of range, or does not
/// fit the run (a batch past the epoch's end, an epoch past the run's, a
/// step count that is not the epochs and batches before it). Extras an
/// older checkpoint lacks count as 0.
Position resumed_position(const io::Checkpoint& checkpoint,
                          const std::string& path,
                          int64_t epochs,
                          int64_t batches);

}  // namespace tandem::cli
