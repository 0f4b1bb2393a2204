// The models `tandem train` knows, by name, for 28x28 grey images in 10
// classes (the MNIST family):
//   mlp  784-1024-1024-10 with ReLU: the model the benchmarks use
//   cnn  two 3x3 conv blocks (conv, batch norm, ReLU, 2x2 max pool; 32 then
//        64 channels), then 3136-128-10 with ReLU
//   resnet  a small ResNet: 3x3 stem, three stages of two residual blocks
//        (16, 32, 64 channels, 28 -> 14 -> 7), global average pooling,
//        Linear 64-10
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tandem/nn/modules/sequential.h"

namespace tandem::cli {

/// The model called `name`, freshly initialised from the default generator;
/// a UsageError for an unknown name.
nn::Sequential make_model(const std::string& name);

/// {"mlp", "cnn", "resnet"}, the --model choices.
const std::vector<std::string>& model_names();

}  // namespace tandem::cli
