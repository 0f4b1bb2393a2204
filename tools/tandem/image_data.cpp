#include "image_data.h"

#include "tandem/data/mnist.h"
#include "tandem/data/transforms.h"

namespace tandem::cli {
namespace {

// Over Fashion-MNIST's 60,000 training images, pixels scaled to [0, 1].
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

ImageSplit load_normalized(const std::string& root, bool train, double mean, double std) {
  using data::datasets::MNIST;
  const MNIST split(root, train ? MNIST::Mode::kTrain : MNIST::Mode::kTest);
  data::transforms::Normalize<> normalize(mean, std);
  return ImageSplit{normalize(split.images()), split.targets()};
}

}  // namespace

ImageSplit load_split(const std::string& root, bool train) {
  return load_normalized(root, train, kPixelMean, kPixelStd);
}

double normalized_black() { return (0.0 - kPixelMean) / kPixelStd; }

ImageSplit load_split_in_tanh_range(const std::string& root, bool train) {
  return load_normalized(root, train, 0.5, 0.5);  // [0, 1] -> [-1, 1]
}

}  // namespace tandem::cli
