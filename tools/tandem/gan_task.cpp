#include "gan_task.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "image_data.h"
#include "model_on_devices.h"
#include "tandem/core/generator.h"
#include "tandem/data/data_loader.h"
#include "tandem/data/tensor_dataset.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/io/image_grid.h"
#include "tandem/nn/nn.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/optim/adam.h"
#include "tandem/parallel/data_parallel_module.h"
#include "writable_path.h"

namespace tandem::cli {
namespace {

constexpr int64_t kNoise = 100;  // numbers of noise a generated image comes from
// Channels of the generator's last hidden layer and of the discriminator's
// first; the layers between have 2x and 4x (pytorch/examples: 64).
constexpr int64_t kWidth = 32;
constexpr int64_t kSamples = 64;  // the grid drawn after each epoch: 8 x 8
constexpr uint64_t kFixedNoiseSeed = 2024;
constexpr int64_t kScoredImages = 1000;  // of the test split, for d_real
constexpr double kLeakySlope = 0.2;

nn::ConvTranspose2d up(
    int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::ConvTranspose2d(nn::ConvTranspose2dOptions(in, out, kernel)
                                 .stride(stride)
                                 .padding(padding)
                                 .bias(false));
}

nn::Conv2d down(
    int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t padding) {
  return nn::Conv2d(
      nn::Conv2dOptions(in, out, kernel).stride(stride).padding(padding).bias(false));
}

// 100 x 1 x 1 -> 4w x 4 x 4 -> 2w x 7 x 7 -> w x 14 x 14 -> 1 x 28 x 28.
nn::Sequential make_generator() {
  nn::Sequential net;
  const struct {
    int64_t in, out, kernel, stride, padding;
  } layers[] = {{kNoise, 4 * kWidth, 4, 1, 0},
                {4 * kWidth, 2 * kWidth, 3, 2, 1},
                {2 * kWidth, kWidth, 4, 2, 1}};
  for (const auto& l : layers) {
    net->push_back(up(l.in, l.out, l.kernel, l.stride, l.padding));
    net->push_back(nn::BatchNorm2d(l.out));
    net->push_back(nn::ReLU());
  }
  net->push_back(up(kWidth, 1, 4, 2, 1));
  net->push_back(nn::Tanh());
  return net;
}

// 1 x 28 x 28 -> w x 14 x 14 -> 2w x 7 x 7 -> 4w x 3 x 3 -> P(real).
nn::Sequential make_discriminator() {
  const auto leaky = [] {
    return nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(kLeakySlope));
  };
  nn::Sequential net(down(1, kWidth, 4, 2, 1), leaky());
  for (int64_t width : {kWidth, 2 * kWidth}) {
    net->push_back(down(width, 2 * width, 4, 2, 1));
    net->push_back(nn::BatchNorm2d(2 * width));
    net->push_back(leaky());
  }
  net->push_back(down(4 * kWidth, 1, 3, 1, 0));
  net->push_back(nn::Sigmoid());
  return net;
}

// The two networks' entries of a checkpoint's maps, told apart by prefix.
constexpr const char* kGeneratorPrefix = "generator.";
constexpr const char* kDiscriminatorPrefix = "discriminator.";

template <typename Map>
void add_prefixed(const Map& from, const std::string& prefix, Map& to) {
  for (const auto& item : from) to.insert({prefix + item.first, item.second});
}

OrderedDict<std::string, Tensor> prefixed_part(
    const OrderedDict<std::string, Tensor>& all, const std::string& prefix) {
  OrderedDict<std::string, Tensor> part;
  for (const auto& item : all) {
    if (item.key().starts_with(prefix)) {
      part.insert(item.key().substr(prefix.size()), item.value());
    }
  }
  return part;
}

optim::StateDict prefixed_part(const optim::StateDict& all, const std::string& prefix) {
  optim::StateDict part;
  for (const auto& [key, value] : all) {
    if (key.starts_with(prefix)) part.emplace(key.substr(prefix.size()), value);
  }
  return part;
}

class GanTask final : public TrainingTask {
 public:
  using Loader = data::DataLoader<data::TensorDataset, data::samplers::RandomSampler>;

  explicit GanTask(const TrainConfig& config) : config_(config) {
    check_devices(config.devices, /*distributed=*/false);
    // Before training, not when the first epoch ends.
    check_writable((samples_dir() / "dcgan-epoch-1.png").string(), "samples grid");
    const ImageSplit train = load_split_in_tanh_range(config.data_dir, /*train=*/true);
    const ImageSplit test = load_split_in_tanh_range(config.data_dir, /*train=*/false);
    train_images_ = train.size();
    scored_ = test.images.narrow(0, 0, std::min(kScoredImages, test.size()));
    loader_.emplace(data::TensorDataset(train.images, train.targets),
                    data::samplers::RandomSampler(train.images.size(0), config.seed),
                    data::DataLoaderOptions()
                        .batch_size(config.batch_size)
                        .workers(config.workers)
                        .pin_memory(device().is_cuda()));
  }

  void make_models() override {
    manual_seed(config_.seed);
    generator_ = make_generator();
    discriminator_ = make_discriminator();
    for (nn::Sequential* net : {&generator_, &discriminator_}) {
      (*net)->to(config_.dtype);
      (*net)->to(device());
    }
    const auto devices = nn::DataParallelOptions().device_ids(config_.devices);
    parallel_generator_ = nn::DataParallel(generator_, devices);
    parallel_discriminator_ = nn::DataParallel(discriminator_, devices);
    const auto adam = optim::AdamOptions(config_.lr)
                          .betas({0.5, 0.999})
                          .weight_decay(config_.weight_decay);
    generator_optimizer_.emplace(generator_->parameters(), adam);
    discriminator_optimizer_.emplace(discriminator_->parameters(), adam);
    Generator noise(kFixedNoiseSeed);
    fixed_noise_ = randn({kSamples, kNoise, 1, 1}, noise).to(config_.dtype).to(device());
  }

  std::string description() const override {
    std::ostringstream out;
    out << "dcgan (width " << kWidth << ", noise " << kNoise << ")"
        << (config_.dtype == kFloat32 ? ""
                                      : " in " + std::string(dtype_name(config_.dtype)))
        << " on " << device_list() << ": " << train_images_ << " training images from "
        << config_.data_dir << "; batch " << config_.batch_size << ", "
        << optimizer_description(config_) << ", samples in " << samples_dir().string();
    return out.str();
  }

  int64_t batches_per_epoch() const override { return loader_->num_batches(); }

  void begin_epoch(int64_t epoch, int64_t first_batch) override {
    for (optim::Optimizer* optimizer : optimizers()) {
      for (auto& group : optimizer->param_groups()) {
        group.options().set_lr(epoch_lr(config_, epoch));
      }
    }
    epoch_.emplace(loader_->epoch(epoch, first_batch));
    next_ = epoch_->begin();
  }

  StepOutcome step(const InterruptScope& /*interrupt*/) override {
    const data::Batch& batch = *next_;
    StepOutcome outcome;
    outcome.batch = batch.index;
    outcome.samples = batch.global_size;
    const Tensor real = batch.data.to(device(), /*non_blocking=*/true).to(config_.dtype);
    const int64_t rows = real.size(0);
    const auto options = TensorOptions().dtype(config_.dtype).device(device());

    // The discriminator: real images labelled U(0.8, 1) (one-sided label
    // smoothing), generated ones labelled 0.
    discriminator_optimizer_->zero_grad();
    const Tensor real_labels = empty({rows}, options).uniform_(0.8, 1.0);
    const Tensor on_real = parallel_discriminator_->forward(real).view({-1});
    const Tensor d_loss_real = binary_cross_entropy(on_real, real_labels);
    d_loss_real.backward();
    const Tensor fakes =
        parallel_generator_->forward(randn({rows, kNoise, 1, 1}, options));
    const Tensor on_fake = parallel_discriminator_->forward(fakes.detach()).view({-1});
    const Tensor d_loss_fake = binary_cross_entropy(on_fake, zeros({rows}, options));
    d_loss_fake.backward();
    const double d_loss = d_loss_real.item<double>() + d_loss_fake.item<double>();
    if (!std::isfinite(d_loss)) {
      outcome.loss = d_loss;  // neither network changes
      ++next_;
      return outcome;
    }
    discriminator_optimizer_->step();

    // The generator, scored by how far the discriminator takes its images
    // for real.
    generator_optimizer_->zero_grad();
    const Tensor judged = parallel_discriminator_->forward(fakes).view({-1});
    const Tensor g_loss = binary_cross_entropy(judged, ones({rows}, options));
    g_loss.backward();
    outcome.loss = d_loss + g_loss.item<double>();
    if (std::isfinite(outcome.loss)) generator_optimizer_->step();
    ++next_;
    return outcome;
  }

  Scores evaluate(int64_t epochs_done) override {
    NoGradGuard no_grad;
    // The samples as the examples draw them: the generator in training
    // mode (batch statistics); the discriminator judges in eval mode.
    const Tensor samples = generator_->forward(fixed_noise_);
    const std::filesystem::path image =
        samples_dir() / ("dcgan-epoch-" + std::to_string(epochs_done) + ".png");
    io::save_image(
        samples, image, io::ImageGridOptions().normalize(true).value_range({-1, 1}));
    discriminator_->eval();
    const double d_real = discriminator_->forward(scored_.to(config_.dtype).to(device()))
                              .mean()
                              .item<double>();
    const double d_fake = discriminator_->forward(samples).mean().item<double>();
    discriminator_->train();
    return {{"d_real", d_real}, {"d_fake", d_fake}};
  }

  void save(io::Checkpoint& checkpoint) override {
    const auto add_model = [&](const nn::Sequential& net, const std::string& prefix) {
      for (const auto& item : net->state_dict()) {
        checkpoint.model.insert(prefix + item.key(), item.value());
      }
    };
    add_model(generator_, kGeneratorPrefix);
    add_model(discriminator_, kDiscriminatorPrefix);
    add_prefixed(
        generator_optimizer_->state_dict(), kGeneratorPrefix, checkpoint.optimizer);
    add_prefixed(discriminator_optimizer_->state_dict(),
                 kDiscriminatorPrefix,
                 checkpoint.optimizer);
  }

  void restore(const io::Checkpoint& checkpoint) override {
    generator_->load_state_dict(prefixed_part(checkpoint.model, kGeneratorPrefix));
    discriminator_->load_state_dict(
        prefixed_part(checkpoint.model, kDiscriminatorPrefix));
    generator_optimizer_->load_state_dict(
        prefixed_part(checkpoint.optimizer, kGeneratorPrefix));
    discriminator_optimizer_->load_state_dict(
        prefixed_part(checkpoint.optimizer, kDiscriminatorPrefix));
  }

  std::string device_list() const override { return cli::device_list(config_.devices); }

  std::vector<double> shares() const override {
    return std::vector<double>(config_.devices.size(),
                               1.0 / static_cast<double>(config_.devices.size()));
  }

 private:
  Device device() const { return config_.devices.front(); }
  std::filesystem::path samples_dir() const {
    return config_.samples_dir.empty() ? "." : config_.samples_dir;
  }
  std::vector<optim::Optimizer*> optimizers() {
    return {&*generator_optimizer_, &*discriminator_optimizer_};
  }

  const TrainConfig& config_;
  int64_t train_images_ = 0;
  Tensor scored_;       // the test images d_real scores
  Tensor fixed_noise_;  // what each epoch's grid is drawn from
  nn::Sequential generator_{nullptr}, discriminator_{nullptr};
  nn::DataParallel parallel_generator_{nullptr}, parallel_discriminator_{nullptr};
  std::optional<optim::Adam> generator_optimizer_, discriminator_optimizer_;
  std::optional<Loader> loader_;
  std::optional<Loader::EpochRange> epoch_;
  Loader::Iterator next_;  // the epoch's next batch
};

}  // namespace

std::unique_ptr<TrainingTask> make_gan_task(const TrainConfig& config) {
  return std::make_unique<GanTask>(config);
}

}  // namespace tandem::cli
