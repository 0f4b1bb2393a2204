// `tandem train`: flags to a TrainConfig; with --resume, the checkpoint's
// settings fill in the flags not given, and a given flag that disagrees
// with them is an error (a resumed run must be the same run).
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "model_on_devices.h"
#include "models.h"
#include "tandem/data/mnist.h"
#include "trainer.h"

namespace tandem::cli {
namespace {

// The flags that name the run's settings, by their run_settings() key.
constexpr std::pair<const char*, const char*> kSettingFlags[] = {
    {"model", "model"},
    {"optimizer", "optimizer"},
    {"lr", "lr"},
    {"batch_size", "batch-size"},
    {"seed", "seed"}};

void apply_resumed_settings(Flags& flags,
                            const io::Checkpoint& checkpoint,
                            const std::string& path) {
  for (const auto& [key, flag] : kSettingFlags) {
    auto it = checkpoint.extra.find(key);
    if (it == checkpoint.extra.end()) {
      throw Error("resume: " + path + " does not record the run's " + key +
                  " (was it written by tandem train?)");
    }
    if (!flags.given(flag)) flags.set(flag, it->second);
  }
}

TrainConfig config_from(const Flags& flags) {
  TrainConfig config;
  config.data_dir = flags.get("data");
  config.model = flags.get("model");
  config.devices =
      flags.get("devices").empty() ? default_devices() : flags.get_devices("devices");
  config.epochs = flags.get_int("epochs");
  config.batch_size = flags.get_int("batch-size");
  config.optimizer = flags.get("optimizer");
  config.lr = flags.get("lr").empty() ? (config.optimizer == "adam" ? 1e-3 : 0.05)
                                      : flags.get_double("lr");
  const int64_t seed = flags.get_int("seed");
  if (seed < 0) throw UsageError("train: --seed must be >= 0");
  config.seed = static_cast<uint64_t>(seed);
  config.workers = flags.get_int("workers");
  config.max_steps = flags.get_int("max-steps");
  config.checkpoint_path = flags.get("checkpoint");
  config.metrics_path = flags.get("metrics");
  if (config.epochs < 0) throw UsageError("train: --epochs must be >= 0");
  if (config.batch_size <= 0) throw UsageError("train: --batch-size must be positive");
  if (config.lr <= 0) throw UsageError("train: --lr must be positive");
  if (config.workers < 0) throw UsageError("train: --workers must be >= 0");
  if (config.max_steps < 0) throw UsageError("train: --max-steps must be >= 0");
  make_model(config.model);  // rejects an unknown name before any data is read
  return config;
}

}  // namespace

int run_train(const Args& args) {
  Flags flags("train");
  flags.add(
      "data", data::datasets::kFashionMNISTRoot, "folder of the MNIST-format files");
  flags.add("model", "mlp", std::string("the model: ") + model_names());
  flags.add("devices", "", "devices, comma-separated (default: all GPUs, else cpu)");
  flags.add("epochs", "10", "passes over the training images");
  flags.add("batch-size", "256", "images per step, split across the devices");
  flags.add("optimizer", "sgd", "sgd (momentum 0.9) or adam");
  flags.add("lr", "", "learning rate (default 0.05 for sgd, 0.001 for adam)");
  flags.add("seed", "0", "seeds the weights and the shuffling");
  flags.add("workers", "1", "threads preparing batches");
  flags.add("max-steps", "0", "stop after this many steps in all (0: no limit)");
  flags.add("checkpoint", "", "checkpoint file, written every epoch and on a stop");
  flags.add("resume", "", "continue the run saved in this checkpoint");
  flags.add("metrics", "", "JSON Lines file with one object per epoch");
  if (!flags.parse(args)) return 0;

  std::optional<io::Checkpoint> resume;
  if (!flags.get("resume").empty()) {
    resume = io::load_checkpoint(flags.get("resume"));
    apply_resumed_settings(flags, *resume, flags.get("resume"));
  }
  const TrainConfig config = config_from(flags);
  if (resume && resume->extra != run_settings(config)) {
    std::string diff;
    const auto wanted = run_settings(config);
    for (const auto& [key, value] : resume->extra) {
      auto it = wanted.find(key);
      if (it != wanted.end() && it->second != value) {
        diff += (diff.empty() ? "" : ", ") + key + " " + it->second +
                " (the checkpoint has " + value + ")";
      }
    }
    throw UsageError("train: --resume continues the run as it was; these flags differ: " +
                     diff);
  }
  return train(config, std::move(resume), std::cout);
}

}  // namespace tandem::cli
