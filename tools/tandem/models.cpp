#include "models.h"

#include "commands.h"
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

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {"mlp", "cnn"};
  return names;
}

nn::Sequential make_model(const std::string& name) {
  if (name == "mlp") return make_mlp();
  if (name == "cnn") return make_cnn();
  throw UsageError("unknown model '" + name + "'");
}

}  // namespace tandem::cli
