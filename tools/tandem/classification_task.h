// `tandem train --model mlp|cnn|resnet`: a classifier of models.h trained
// on an MNIST-family dataset (image_data.h), scored on the test split after
// every epoch. The one task that also runs under mpirun (each process on
// one device, DistributedDataParallel), with shares (--balance) and in
// invariant mode: ModelOnDevices holds those.
#pragma once

#include <memory>

#include "training_task.h"

namespace tandem::cli {

std::unique_ptr<TrainingTask> make_classification_task(
    const TrainConfig& config,
    const io::Checkpoint* resume,
    std::shared_ptr<distributed::ProcessGroup> group);

}  // namespace tandem::cli
