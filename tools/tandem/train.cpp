// `tandem train`: flags to a TrainConfig; with --resume, the checkpoint's
// settings fill in the flags not given, and a given flag that disagrees
// with them is an error (a resumed run must be the same run).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.h"
#include "launched_group.h"
#include "model_on_devices.h"
#include "models.h"
#include "options.h"
#include "tandem/core/device_guard.h"
#include "trainer.h"

namespace tandem::cli {
namespace {

// What the flags fill in: TrainConfig's fields where they are the flags'
// values, the rest read when the run starts.
struct TrainFlags {
  TrainConfig config;
  std::string dtype = "float32";
  std::string devices;
  std::optional<double> lr;  // default by optimizer
  std::string resume;
};

// A setting's flag: run_settings() key "batch_size" is --batch-size.
std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

// The checkpoint's settings stand in for the flags not given, read as if
// given (so they are checked as a given flag is).
void apply_resumed_settings(CLI::App& command,
                            const io::Checkpoint& checkpoint,
                            const std::string& path) {
  for (const auto& [key, unused] : run_settings(TrainConfig())) {
    auto it = checkpoint.extra.find(key);
    if (it == checkpoint.extra.end() && key == "dtype") continue;  // older: float32
    if (it == checkpoint.extra.end()) {
      throw Error("resume: " + path + " does not record the run's " + key +
                  " (was it written by tandem train?)");
    }
    CLI::Option* flag = command.get_option(flag_of(key));
    if (flag->count() > 0) continue;
    try {
      flag->add_result(it->second);
      flag->run_callback();
    } catch (const CLI::ParseError& e) {
      throw Error("resume: " + path + " records a " + key +
                  " tandem train refuses: " + e.what());
    }
  }
}

// A given flag that disagrees with the checkpoint: a different run.
void check_same_run(const TrainConfig& config, const io::Checkpoint& checkpoint) {
  std::string differences;
  for (const auto& [key, value] : run_settings(config)) {
    auto it = checkpoint.extra.find(key);
    const std::string recorded = it != checkpoint.extra.end() ? it->second : "float32";
    if (recorded == value) continue;
    differences += (differences.empty() ? "" : ", ") + flag_of(key) + " " + value +
                   " (the checkpoint has " + recorded + ")";
  }
  if (!differences.empty()) {
    throw UsageError("train: --resume continues the run as it was; these flags differ: " +
                     differences);
  }
}

int run_train(CLI::App& command, TrainFlags& flags) {
  std::optional<io::Checkpoint> resume;
  if (!flags.resume.empty()) {
    resume = io::load_checkpoint(flags.resume);
    apply_resumed_settings(command, *resume, flags.resume);
    // Go on saving where the run was saved, unless told otherwise.
    if (command.get_option("--checkpoint")->count() == 0) {
      flags.config.checkpoint_path = flags.resume;
    }
  }
  const auto group = launched_group();
  TrainConfig config = flags.config;
  config.dtype = flags.dtype == "float64" ? kFloat64 : kFloat32;
  config.lr = flags.lr.value_or(config.optimizer == "adam" ? 1e-3 : 0.05);
  // One device per process: by default the GPU of its local rank when there
  // are GPUs and NCCL to reduce on them, else the CPU.
  if (group && flags.devices.empty()) {
    const int64_t gpus = distributed::is_nccl_available() ? device_count(kCUDA) : 0;
    config.devices = {
        gpus > 0 ? Device(kCUDA, static_cast<int>(distributed::get_local_rank() % gpus))
                 : Device(kCPU)};
  } else {
    config.devices = devices_or_default(flags.devices);
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

}  // namespace

Action train_command(CLI::App& command) {
  auto flags = std::make_shared<TrainFlags>();
  TrainConfig& config = flags->config;
  add_data_flag(command, config.data_dir);
  command.add_option("--model", config.model, "the model")
      ->check(one_of("model", model_names()));
  add_devices_flag(command, flags->devices);
  command
      .add_option("--dtype",
                  flags->dtype,
                  "float32, or float64 (slower; for checking results against a "
                  "reference)")
      ->check(one_of("dtype", {"float32", "float64"}));
  command.add_option("--epochs", config.epochs, "passes over the training images")
      ->check(whole_number(1));
  command
      .add_option(
          "--batch-size",
          config.batch_size,
          "images per step, split across the devices (and the processes under mpirun)")
      ->check(whole_number(1));
  command.add_option("--optimizer", config.optimizer, "sgd (momentum 0.9) or adam")
      ->check(one_of("optimizer", {"sgd", "adam"}));
  command
      .add_option(
          "--lr", flags->lr, "learning rate (default 0.05 for sgd, 0.001 for adam)")
      ->check(positive_number());
  command
      .add_option("--lr-schedule",
                  config.lr_schedule,
                  "cosine (annealed to 0 over the epochs) or constant")
      ->check(one_of("schedule", {"cosine", "constant"}));
  command.add_option("--seed", config.seed, "seeds the weights and the shuffling")
      ->check(whole_number(0));
  command
      .add_option("--workers",
                  config.workers,
                  "threads preparing batches (0: the training thread, best for "
                  "in-memory data, where a batch is one gather)")
      ->check(whole_number(0, kMaxThreads));
  command
      .add_option("--max-steps",
                  config.max_steps,
                  "stop after this many steps in all (0: no limit)")
      ->check(whole_number(0));
  command.add_option("--checkpoint",
                     config.checkpoint_path,
                     "checkpoint file, written every epoch and on a stop");
  command.add_option(
      "--resume", flags->resume, "continue the run saved in this checkpoint");
  command.add_option(
      "--metrics", config.metrics_path, "JSON Lines file with one object per epoch");
  return [&command, flags] { return run_train(command, *flags); };
}

}  // namespace tandem::cli
