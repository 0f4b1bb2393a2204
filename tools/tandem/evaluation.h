// Test loss and accuracy of a model over a split, in eval mode and without
// autograd, in batches. In a distributed run (the model has a process
// group) each process evaluates its own consecutive slice of the split,
// unpadded, and the sums are added up across the processes, so every
// image counts exactly once and every process gets the same result.
#pragma once

#include <cstdint>

#include "image_data.h"
#include "model_on_devices.h"

namespace tandem::cli {

struct Evaluation {
  double loss = 0;      // mean cross-entropy per image
  double accuracy = 0;  // fraction classified right
  int64_t images = 0;
};

/// Leaves the model in training mode afterwards.
Evaluation evaluate(ModelOnDevices& model, const ImageSplit& split, int64_t batch_size);

}  // namespace tandem::cli
