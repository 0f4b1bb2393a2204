#include "image_data.h"

#include "tandem/data/mnist.h"
#include "tandem/data/transforms.h"

namespace tandem::cli {
namespace {

// Over Fashion-MNIST's 60,000 training images, pixels scaled to [0, 1].
constexpr double kPixelMean = 0.2860;
constexpr double kPixelStd = 0.3530;

}  // namespace

ImageSplit load_split(const std::string& root, bool train) {
  using data::datasets::MNIST;
  const MNIST split(root, train ? MNIST::Mode::kTrain : MNIST::Mode::kTest);
  data::transforms::Normalize<> normalize(kPixelMean, kPixelStd);
  return ImageSplit{normalize(split.images()), split.targets()};
}

}  // namespace tandem::cli
