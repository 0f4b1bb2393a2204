// A small ResNet trained on Fashion-MNIST with DataParallel, written as a
// LibTorch user writes it: modules with register_module, a data loader over
// the MNIST dataset class, Adam with a cosine schedule, evaluation on the
// test split after every epoch. `tandem train --model resnet` trains the
// same network with checkpoints, metrics and resume.
//
//   ./resnet_fashion_mnist                       # 10 epochs on cpu:0,cpu:1
//   ./resnet_fashion_mnist --epochs 3 --devices cpu:0
//   ./resnet_fashion_mnist --max-steps 3         # a smoke run (CI runs this)
//
// On two cores of an AMD EPYC it reaches about 0.93 test accuracy in 10
// epochs (README, "Three real models").
#include <tandem/tandem.h>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "flags.h"

using namespace tandem;

// Fashion-MNIST's pixel statistics over the training split.
constexpr double kPixelMean = 0.2860, kPixelStd = 0.3530;

struct BasicBlockImpl : nn::Cloneable<BasicBlockImpl> {
  BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride)
      : in_planes(in_planes), planes(planes), stride(stride) {
    reset();
  }

  void reset() override {
    conv1 = register_module("conv1",
                            nn::Conv2d(nn::Conv2dOptions(in_planes, planes, 3)
                                           .stride(stride)
                                           .padding(1)
                                           .bias(false)));
    bn1 = register_module("bn1", nn::BatchNorm2d(planes));
    conv2 = register_module(
        "conv2", nn::Conv2d(nn::Conv2dOptions(planes, planes, 3).padding(1).bias(false)));
    bn2 = register_module("bn2", nn::BatchNorm2d(planes));
    if (stride != 1 || in_planes != planes) {
      downsample = register_module(
          "downsample",
          nn::Sequential(
              nn::Conv2d(
                  nn::Conv2dOptions(in_planes, planes, 1).stride(stride).bias(false)),
              nn::BatchNorm2d(planes)));
    }
  }

  Tensor forward(Tensor x) {
    Tensor identity = downsample.is_empty() ? x : downsample->forward(x);
    x = relu(bn1->forward(conv1->forward(x)));
    x = bn2->forward(conv2->forward(x));
    return relu(x + identity);
  }

  int64_t in_planes, planes, stride;
  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::BatchNorm2d bn1{nullptr}, bn2{nullptr};
  nn::Sequential downsample{nullptr};
};
TANDEM_MODULE(BasicBlock);

// Stem, three stages of two blocks (16, 32, 64 planes; 28 -> 14 -> 7),
// global average pooling, a linear classifier.
struct ResNetImpl : nn::Cloneable<ResNetImpl> {
  ResNetImpl() { reset(); }

  void reset() override {
    stem = register_module(
        "stem",
        nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 3).padding(1).bias(false)),
                       nn::BatchNorm2d(16),
                       nn::ReLU()));
    layers = register_module("layers", nn::Sequential());
    int64_t in_planes = 16;
    for (int64_t planes : {16, 32, 64}) {
      layers->push_back(BasicBlock(in_planes, planes, planes == in_planes ? 1 : 2));
      layers->push_back(BasicBlock(planes, planes, 1));
      in_planes = planes;
    }
    fc = register_module("fc", nn::Linear(in_planes, 10));
  }

  Tensor forward(Tensor x) {
    x = layers->forward(stem->forward(x));
    x = adaptive_avg_pool2d(x, {1, 1}).flatten(1);
    return fc->forward(x);
  }

  nn::Sequential stem{nullptr}, layers{nullptr};
  nn::Linear fc{nullptr};
};
TANDEM_MODULE(ResNet);

struct Settings {
  int64_t epochs = 10;
  int64_t max_steps = std::numeric_limits<int64_t>::max();
  std::vector<Device> devices = {"cpu:0", "cpu:1"};
};

Settings parse(int argc, char** argv) {
  Settings settings;
  ExampleFlags flags(argc, argv);
  flags.read("--epochs", settings.epochs);
  flags.read("--max-steps", settings.max_steps);
  flags.read("--devices", settings.devices);
  flags.finish();
  return settings;
}

int main(int argc, char** argv) try {
  const Settings settings = parse(argc, argv);
  manual_seed(1);

  auto train_set = data::datasets::MNIST(data::datasets::kFashionMNISTRoot)
                       .map(data::transforms::Normalize<>(kPixelMean, kPixelStd))
                       .map(data::transforms::Stack<>());
  auto test_set = data::datasets::MNIST(data::datasets::kFashionMNISTRoot,
                                        data::datasets::MNIST::Mode::kTest)
                      .map(data::transforms::Normalize<>(kPixelMean, kPixelStd))
                      .map(data::transforms::Stack<>());
  const auto train_size = static_cast<int64_t>(*train_set.size());
  auto train_loader = data::make_data_loader<data::samplers::RandomSampler>(
      std::move(train_set), data::DataLoaderOptions().batch_size(256).workers(2));
  auto test_loader = data::make_data_loader<data::samplers::SequentialSampler>(
      std::move(test_set), data::DataLoaderOptions().batch_size(1000).workers(2));

  ResNet model;
  model->to(settings.devices.front());
  nn::DataParallel parallel(model,
                            nn::DataParallelOptions().device_ids(settings.devices));
  optim::Adam optimizer(model->parameters(), optim::AdamOptions(1e-3));
  const int64_t steps_per_epoch = std::min((train_size + 255) / 256, settings.max_steps);
  optim::CosineAnnealingLR scheduler(optimizer, settings.epochs * steps_per_epoch);

  std::cout << "ResNet on Fashion-MNIST, DataParallel over " << settings.devices.size()
            << " devices, " << settings.epochs << " epochs\n";
  for (int64_t epoch = 1; epoch <= settings.epochs; ++epoch) {
    model->train();
    double loss_sum = 0;
    int64_t steps = 0;
    for (auto& batch : *train_loader) {
      if (steps == settings.max_steps) break;
      optimizer.zero_grad();
      Tensor output = parallel->forward(batch.data.to(settings.devices.front()));
      Tensor loss = cross_entropy(output, batch.target.to(settings.devices.front()));
      loss.backward();
      optimizer.step();
      scheduler.step();
      loss_sum += loss.item<double>();
      ++steps;
    }

    NoGradGuard no_grad;
    model->eval();
    int64_t correct = 0, seen = 0, test_batches = 0;
    for (auto& batch : *test_loader) {
      if (test_batches++ == settings.max_steps) break;
      Tensor output = parallel->forward(batch.data.to(settings.devices.front()));
      correct += output.argmax(1)
                     .eq(batch.target.to(settings.devices.front()))
                     .sum()
                     .item<int64_t>();
      seen += batch.target.size(0);
    }
    std::cout << "epoch " << epoch << "/" << settings.epochs << "  train_loss "
              << std::fixed << std::setprecision(4)
              << loss_sum / static_cast<double>(steps) << "  test_accuracy "
              << static_cast<double>(correct) / static_cast<double>(seen) << std::endl;
  }
  return 0;
} catch (const std::exception& error) {
  std::cerr << "error: " << error.what() << "\n";
  return 1;
}
