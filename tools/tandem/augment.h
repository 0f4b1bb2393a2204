// Data augmentation for `tandem train --augment` (the classifiers): each
// training image mirrored left-right with probability 1/2 and shifted by up
// to 2 pixels each way, what the shift uncovers filled with the background,
// as torchvision's RandomHorizontalFlip and RandomCrop(28, padding=2) do.
//
// The draws are keyed by the run's seed, the epoch and the image's row in
// the global batch (a counter-based hash, no generator state), so a resumed
// run, any --devices list and any number of processes draw the same: each
// process passes the global row of its part's first image.
//
//   images = augment(batch.data, {seed, epoch, batch.index}, first_row, background);
#pragma once

#include <cstdint>

#include "tandem/core/tensor.h"

namespace tandem::cli {

struct AugmentKey {
  uint64_t seed = 0;
  int64_t epoch = 0;
  int64_t batch = 0;
};

/// A new [N, C, H, W] batch: image i of `images` (a CPU tensor, float32 or
/// float64) mirrored and shifted as drawn for row first_row + i of batch
/// `key`, uncovered pixels set to `background`.
Tensor augment(const Tensor& images,
               const AugmentKey& key,
               int64_t first_row,
               double background);

}  // namespace tandem::cli
