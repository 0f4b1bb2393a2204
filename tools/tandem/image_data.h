// The data of `tandem train` and `tandem eval`: an MNIST-family split
// (Fashion-MNIST by default) read whole into memory and normalised with
// Fashion-MNIST's pixel mean and standard deviation (or, for a generator,
// mapped to [-1, 1]).
#pragma once

#include <string>

#include "tandem/core/tensor.h"

namespace tandem::cli {

struct ImageSplit {
  Tensor images;   // [N, 1, 28, 28] float32, normalised
  Tensor targets;  // [N] int64 in [0, 10)
  int64_t size() const { return targets.size(0); }
};

/// The training split (train = true) or the test split under `root`.
ImageSplit load_split(const std::string& root, bool train);

/// A black pixel's value in load_split's images (the background).
double normalized_black();

/// The same with the pixels mapped to [-1, 1], the range of a generator's
/// tanh (dcgan).
ImageSplit load_split_in_tanh_range(const std::string& root, bool train);

}  // namespace tandem::cli
