#include "models.h"

#include "commands.h"
#include "residual_block.h"
#include "tandem/nn/nn.h"

namespace tandem::cli {
namespace {

constexpr int64_t kPixels = 28 * 28;
constexpr int64_t kClasses = 10;

nn::Sequential make_mlp() {
  return nn::Sequential(nn::Flatten(),
                        nn::Linear(kPixels, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, kClasses));
}

// Each block halves the image: 28 -> 14 -> 7.
nn::Sequential make_cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),
                        nn::BatchNorm2d(32),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                        nn::BatchNorm2d(64),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Flatten(),
                        nn::Linear(64 * 7 * 7, 128),
                        nn::ReLU(),
                        nn::Linear(128, kClasses));
}

// A small ResNet: a 3x3 stem, three stages of two residual blocks (16, 32
// and 64 channels; the second and third halve the image, 28 -> 14 -> 7),
// global average pooling and one Linear layer. About 0.18 M parameters and
// 20 M multiply-adds an image.
nn::Sequential make_resnet() {
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1).bias(false)),
                     nn::BatchNorm2d(16),
                     nn::ReLU());
  int64_t channels = 16;
  for (int64_t width : {16, 32, 64}) {
    net->push_back(ResidualBlock(channels, width, width == channels ? 1 : 2));
    net->push_back(ResidualBlock(width, width, 1));
    channels = width;
  }
  net->push_back(nn::AdaptiveAvgPool2d(1));
  net->push_back(nn::Flatten());
  net->push_back(nn::Linear(channels, kClasses));
  return net;
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "cnn", "resnet"};
  return names;
}

nn::Sequential make_model(const std::string& name) {
  if (name == "mlp") return make_mlp();
  if (name == "cnn") return make_cnn();
  if (name == "resnet") return make_resnet();
  throw UsageError("unknown model '" + name + "'");
}

}  // namespace tandem::cli
