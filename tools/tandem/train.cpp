// `tandem train`: flags to a TrainConfig; with --resume, the checkpoint's
// settings fill in the flags not given, and a given flag that disagrees
// with them is an error (a resumed run must be the same run).
#include <algorithm>
#include <cmath>
#include <iostream>

#include "commands.h"
#include "flags.h"
#include "image_data.h"
#include "launched_group.h"
#include "model_on_devices.h"
#include "models.h"
#include "tandem/core/device_guard.h"
#include "trainer.h"

namespace tandem::cli {
namespace {

// A setting's flag: run_settings() key "batch_size" is --batch-size.
std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// The checkpoint's settings stand in for the flags not given.
void apply_resumed_settings(Flags& flags,
                            const io::Checkpoint& checkpoint,
                            const std::string& path) {
  for (const auto& [key, unused] : run_settings(TrainConfig())) {
    auto it = checkpoint.extra.find(key);
    if (it == checkpoint.extra.end() && key == "dtype") continue;  // older: float32
    if (it == checkpoint.extra.end()) {
      throw Error("resume: " + path + " does not record the run's " + key +
                  " (was it written by tandem train?)");
    }
    if (!flags.given(flag_of(key))) flags.set(flag_of(key), it->second);
  }
}

// A given flag that disagrees with the checkpoint: a different run.
void check_same_run(const TrainConfig& config, const io::Checkpoint& checkpoint) {
  std::string differences;
  for (const auto& [key, value] : run_settings(config)) {
    auto it = checkpoint.extra.find(key);
    const std::string recorded = it != checkpoint.extra.end() ? it->second : "float32";
    if (recorded == value) continue;
    differences += (differences.empty() ? "" : ", ") + ("--" + flag_of(key)) + " " +
                   value + " (the checkpoint has " + recorded + ")";
  }
  if (!differences.empty()) {
    throw UsageError("train: --resume continues the run as it was; these flags differ: " +
                     differences);
  }
}

ScalarType dtype_flag(const std::string& value) {
  if (value == "float32") return kFloat32;
  if (value == "float64") return kFloat64;
  throw UsageError("train: --dtype must be float32 or float64, got '" + value + "'");
}

TrainConfig config_from(const Flags& flags) {
  TrainConfig config;
  config.data_dir = flags.get("data");
  config.model = flags.get("model");
  config.dtype = dtype_flag(flags.get("dtype"));
  config.devices = devices_flag(flags);
  config.epochs = flags.get_int("epochs");
  config.batch_size = flags.get_int("batch-size");
  config.optimizer = flags.get("optimizer");
  config.lr = flags.get("lr").empty() ? (config.optimizer == "adam" ? 1e-3 : 0.05)
                                      : flags.get_double("lr");
  config.lr_schedule = flags.get("lr-schedule");
  if (config.lr_schedule != "cosine" && config.lr_schedule != "constant") {
    throw UsageError("train: --lr-schedule must be cosine or constant, got '" +
                     config.lr_schedule + "'");
  }
  const int64_t seed = flags.get_int("seed");
  if (seed < 0) throw UsageError("train: --seed must be >= 0");
  config.seed = static_cast<uint64_t>(seed);
  config.workers = flags.get_int("workers");
  config.max_steps = flags.get_int("max-steps");
  config.checkpoint_path = flags.get("checkpoint");
  config.metrics_path = flags.get("metrics");
  if (config.epochs < 0) throw UsageError("train: --epochs must be >= 0");
  if (config.batch_size <= 0) throw UsageError("train: --batch-size must be positive");
  if (!(std::isfinite(config.lr) && config.lr > 0)) {
    throw UsageError("train: --lr must be a positive number");
  }
  if (config.workers < 0) throw UsageError("train: --workers must be >= 0");
  if (config.max_steps < 0) throw UsageError("train: --max-steps must be >= 0");
  if (!is_model_name(config.model)) {
    throw UsageError("train: unknown model '" + config.model + "' (expected " +
                     model_names() + ")");
  }
  return config;
}

}  // namespace

int run_train(const Args& args) {
  Flags flags("train");
  add_data_flag(flags);
  flags.add("model", "mlp", std::string("the model: ") + model_names());
  add_devices_flag(flags);
  flags.add("dtype",
            "float32",
            "float32, or float64 (slower; for checking results against a reference)");
  flags.add("epochs", "10", "passes over the training images");
  flags.add("batch-size",
            "256",
            "images per step, split across the devices (and the processes under mpirun)");
  flags.add("optimizer", "sgd", "sgd (momentum 0.9) or adam");
  flags.add("lr", "", "learning rate (default 0.05 for sgd, 0.001 for adam)");
  flags.add(
      "lr-schedule", "cosine", "cosine (annealed to 0 over the epochs) or constant");
  flags.add("seed", "0", "seeds the weights and the shuffling");
  flags.add("workers",
            "0",
            "threads preparing batches (0: the training thread, best for "
            "in-memory data, where a batch is one gather)");
  flags.add("max-steps", "0", "stop after this many steps in all (0: no limit)");
  flags.add("checkpoint", "", "checkpoint file, written every epoch and on a stop");
  flags.add("resume", "", "continue the run saved in this checkpoint");
  flags.add("metrics", "", "JSON Lines file with one object per epoch");
  if (!flags.parse(args)) return 0;

  std::optional<io::Checkpoint> resume;
  if (!flags.get("resume").empty()) {
    resume = io::load_checkpoint(flags.get("resume"));
    apply_resumed_settings(flags, *resume, flags.get("resume"));
    // Go on saving where the run was saved, unless told otherwise.
    if (!flags.given("checkpoint")) flags.set("checkpoint", flags.get("resume"));
  }
  const auto group = launched_group();
  TrainConfig config = config_from(flags);
  // One device per process: by default the GPU of its local rank when there
  // are GPUs and NCCL to reduce on them, else the CPU.
  if (group && !flags.given("devices")) {
    const int64_t gpus = distributed::is_nccl_available() ? device_count(kCUDA) : 0;
    config.devices = {
        gpus > 0 ? Device(kCUDA, static_cast<int>(distributed::get_local_rank() % gpus))
                 : Device(kCPU)};
  }
  if (group && config.batch_size < group->size()) {
    throw UsageError(
        "train: --batch-size " + std::to_string(config.batch_size) +
        " is the global batch; it must be at least the number of processes (" +
        std::to_string(group->size()) + ")");
  }
  if (resume) check_same_run(config, *resume);
  return train(config, std::move(resume), std::cout, group);
}

}  // namespace tandem::cli
