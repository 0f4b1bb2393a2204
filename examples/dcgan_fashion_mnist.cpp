// A DCGAN trained on Fashion-MNIST with DataParallel, written as a LibTorch
// user writes it (after pytorch/examples' cpp/dcgan): a generator of
// transposed convolutions from 100 numbers of noise to a 28x28 image, a
// convolutional discriminator, binary cross-entropy with the real labels
// smoothed to U(0.8, 1), two Adam optimizers. After every epoch it saves
// what the generator makes of a fixed noise batch (dcgan-epoch-N.png, 64
// samples) and a checkpoint of both networks and both optimizers, which
// --resume continues from.
//
//   ./dcgan_fashion_mnist                        # 10 epochs on cpu:0,cpu:1
//   ./dcgan_fashion_mnist --epochs 5 --out run   # images and checkpoint in run/
//   ./dcgan_fashion_mnist --epochs 8 --out run --resume run/dcgan-checkpoint.safetensors
//   ./dcgan_fashion_mnist --max-steps 3          # a smoke run (CI runs this)
//
// The third line continues the second run with epochs 6 to 8.
#include <tandem/tandem.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include "flags.h"

using namespace tandem;
namespace fs = std::filesystem;

// The size of the noise vector fed to the generator.
constexpr int64_t kNoiseSize = 100;
constexpr int64_t kBatchSize = 64;
// How many samples of the fixed noise each epoch's image shows (8 x 8).
constexpr int64_t kSamples = 64;
constexpr uint64_t kFixedNoiseSeed = 2024;
// Channels of the generator's last hidden layer and the discriminator's
// first; the layers between have 2x and 4x. pytorch/examples uses 64: half
// of it trains about 4x faster on a CPU and still draws clothing well.
constexpr int64_t kWidth = 32;

// 100 x 1 x 1 -> 128 x 4 x 4 -> 64 x 7 x 7 -> 32 x 14 x 14 -> 1 x 28 x 28,
// in [-1, 1] as the normalised images are.
nn::Sequential make_generator() {
  return nn::Sequential(
      nn::ConvTranspose2d(
          nn::ConvTranspose2dOptions(kNoiseSize, 4 * kWidth, 4).bias(false)),
      nn::BatchNorm2d(4 * kWidth),
      nn::ReLU(),
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4 * kWidth, 2 * kWidth, 3)
                              .stride(2)
                              .padding(1)
                              .bias(false)),
      nn::BatchNorm2d(2 * kWidth),
      nn::ReLU(),
      nn::ConvTranspose2d(nn::ConvTranspose2dOptions(2 * kWidth, kWidth, 4)
                              .stride(2)
                              .padding(1)
                              .bias(false)),
      nn::BatchNorm2d(kWidth),
      nn::ReLU(),
      nn::ConvTranspose2d(
          nn::ConvTranspose2dOptions(kWidth, 1, 4).stride(2).padding(1).bias(false)),
      nn::Tanh());
}

// 1 x 28 x 28 -> 32 x 14 x 14 -> 64 x 7 x 7 -> 128 x 3 x 3 -> the
// probability that the image is real.
nn::Sequential make_discriminator() {
  const auto leaky_relu = [] {
    return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2));
  };
  return nn::Sequential(
      nn::Conv2d(nn::Conv2dOptions(1, kWidth, 4).stride(2).padding(1).bias(false)),
      leaky_relu(),
      nn::Conv2d(
          nn::Conv2dOptions(kWidth, 2 * kWidth, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(2 * kWidth),
      leaky_relu(),
      nn::Conv2d(
          nn::Conv2dOptions(2 * kWidth, 4 * kWidth, 4).stride(2).padding(1).bias(false)),
      nn::BatchNorm2d(4 * kWidth),
      leaky_relu(),
      nn::Conv2d(nn::Conv2dOptions(4 * kWidth, 1, 3).bias(false)),
      nn::Sigmoid());
}

struct Settings {
  int64_t epochs = 10;
  int64_t max_steps = std::numeric_limits<int64_t>::max();
  std::vector<Device> devices = {"cpu:0", "cpu:1"};
  std::string out = ".";
  std::string resume;  // a checkpoint to continue from
};

Settings parse(int argc, char** argv) {
  Settings settings;
  ExampleFlags flags(argc, argv);
  flags.read("--epochs", settings.epochs);
  flags.read("--max-steps", settings.max_steps);
  flags.read("--devices", settings.devices);
  flags.read("--out", settings.out);
  flags.read("--resume", settings.resume);
  flags.finish();
  return settings;
}

// One checkpoint holds both networks and both optimizers (so they are
// saved together, atomically), their keys prefixed "generator." and
// "discriminator.".
io::TensorMap with_prefix(const std::string& prefix, const io::TensorMap& tensors) {
  io::TensorMap prefixed;
  for (const auto& [key, tensor] : tensors) prefixed.emplace(prefix + key, tensor);
  return prefixed;
}

io::TensorMap under_prefix(const std::string& prefix, const io::TensorMap& tensors) {
  io::TensorMap unprefixed;
  for (const auto& [key, tensor] : tensors) {
    if (key.starts_with(prefix)) unprefixed.emplace(key.substr(prefix.size()), tensor);
  }
  return unprefixed;
}

struct Gan {
  nn::Sequential generator = make_generator();
  nn::Sequential discriminator = make_discriminator();
  optim::Adam generator_optimizer{generator->parameters(),
                                  optim::AdamOptions(2e-4).betas({0.5, 0.999})};
  optim::Adam discriminator_optimizer{discriminator->parameters(),
                                      optim::AdamOptions(2e-4).betas({0.5, 0.999})};

  void save(const fs::path& path, int64_t next_epoch, int64_t step) const {
    io::Checkpoint checkpoint;
    io::TensorMap models =
        with_prefix("generator.", io::to_tensor_map(generator->state_dict()));
    models.merge(
        with_prefix("discriminator.", io::to_tensor_map(discriminator->state_dict())));
    checkpoint.model = io::to_state_dict(models);
    checkpoint.optimizer = with_prefix("generator.", generator_optimizer.state_dict());
    checkpoint.optimizer.merge(
        with_prefix("discriminator.", discriminator_optimizer.state_dict()));
    checkpoint.epoch = next_epoch;
    checkpoint.step = step;
    checkpoint.rng_states["default"] = default_generator().get_state();
    io::save_checkpoint(checkpoint, path);
  }

  // Returns the checkpoint's epoch and step.
  std::pair<int64_t, int64_t> load(const fs::path& path) {
    const io::Checkpoint checkpoint = io::load_checkpoint(path);
    const io::TensorMap models = io::to_tensor_map(checkpoint.model);
    generator->load_state_dict(io::to_state_dict(under_prefix("generator.", models)));
    discriminator->load_state_dict(
        io::to_state_dict(under_prefix("discriminator.", models)));
    generator_optimizer.load_state_dict(under_prefix("generator.", checkpoint.optimizer));
    discriminator_optimizer.load_state_dict(
        under_prefix("discriminator.", checkpoint.optimizer));
    default_generator().set_state(checkpoint.rng_states.at("default"));
    return {checkpoint.epoch, checkpoint.step};
  }
};

// Running means over an epoch of what the Python DCGAN example prints.
struct EpochStats {
  double d_loss = 0, g_loss = 0, d_real = 0, d_fake_before = 0, d_fake_after = 0;
  int64_t steps = 0;

  void print(int64_t epoch, int64_t epochs, double seconds) const {
    const auto n = static_cast<double>(steps);
    std::cout << "epoch " << epoch << "/" << epochs << std::fixed << std::setprecision(4)
              << "  loss_D " << d_loss / n << "  loss_G " << g_loss / n << "  D(x) "
              << d_real / n << "  D(G(z)) " << d_fake_before / n << " / "
              << d_fake_after / n << std::setprecision(1) << "  time " << seconds << "s"
              << std::endl;
  }
};

int main(int argc, char** argv) try {
  const Settings settings = parse(argc, argv);
  const Device device = settings.devices.front();
  manual_seed(1);
  const fs::path out = settings.out;
  fs::create_directories(out);

  auto dataset = data::datasets::MNIST(data::datasets::kFashionMNISTRoot)
                     .map(data::transforms::Normalize<>(0.5, 0.5))
                     .map(data::transforms::Stack<>());
  auto data_loader = data::make_data_loader<data::samplers::RandomSampler>(
      std::move(dataset), data::DataLoaderOptions().batch_size(kBatchSize).workers(2));

  Gan gan;
  gan.generator->to(device);
  gan.discriminator->to(device);
  const auto parallel = nn::DataParallelOptions().device_ids(settings.devices);
  nn::DataParallel generator(gan.generator, parallel);
  nn::DataParallel discriminator(gan.discriminator, parallel);
  Generator noise_generator(kFixedNoiseSeed);
  const Tensor fixed_noise =
      randn({kSamples, kNoiseSize, 1, 1}, noise_generator).to(device);

  int64_t first_epoch = 1, step = 0;
  if (!settings.resume.empty()) {
    std::tie(first_epoch, step) = gan.load(settings.resume);
    std::cout << "resumed from " << settings.resume << " at epoch " << first_epoch
              << "\n";
  }

  std::cout << "DCGAN on Fashion-MNIST, DataParallel over " << settings.devices.size()
            << " devices, " << settings.epochs << " epochs\n";
  for (int64_t epoch = first_epoch; epoch <= settings.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    EpochStats stats;
    for (auto& batch : *data_loader) {
      if (stats.steps == settings.max_steps) break;
      const Tensor real_images = batch.data.to(device);
      const int64_t size = real_images.size(0);

      // The discriminator, on real images labelled U(0.8, 1) (one-sided
      // label smoothing), then on generated ones labelled 0.
      gan.discriminator->zero_grad();
      const Tensor real_labels = empty({size}, device).uniform_(0.8, 1.0);
      const Tensor real_output = discriminator->forward(real_images).view({-1});
      const Tensor d_loss_real = binary_cross_entropy(real_output, real_labels);
      d_loss_real.backward();

      const Tensor noise = randn({size, kNoiseSize, 1, 1}, device);
      const Tensor fake_images = generator->forward(noise);
      const Tensor fake_output = discriminator->forward(fake_images.detach()).view({-1});
      const Tensor d_loss_fake = binary_cross_entropy(fake_output, zeros({size}, device));
      d_loss_fake.backward();
      gan.discriminator_optimizer.step();

      // The generator, scored by how far the discriminator takes its
      // images for real.
      gan.generator->zero_grad();
      const Tensor judged = discriminator->forward(fake_images).view({-1});
      const Tensor g_loss = binary_cross_entropy(judged, ones({size}, device));
      g_loss.backward();
      gan.generator_optimizer.step();

      stats.d_loss += d_loss_real.item<double>() + d_loss_fake.item<double>();
      stats.g_loss += g_loss.item<double>();
      stats.d_real += real_output.mean().item<double>();
      stats.d_fake_before += fake_output.mean().item<double>();
      stats.d_fake_after += judged.mean().item<double>();
      ++stats.steps;
      ++step;
    }
    const std::chrono::duration<double> seconds =
        std::chrono::steady_clock::now() - start;
    stats.print(epoch, settings.epochs, seconds.count());

    {
      NoGradGuard no_grad;
      const fs::path image = out / ("dcgan-epoch-" + std::to_string(epoch) + ".png");
      io::save_image(gan.generator->forward(fixed_noise),
                     image,
                     io::ImageGridOptions().normalize(true).value_range({-1, 1}));
    }
    gan.save(out / "dcgan-checkpoint.safetensors", epoch + 1, step);
  }
  return 0;
} catch (const std::exception& error) {
  std::cerr << "error: " << error.what() << "\n";
  return 1;
}
