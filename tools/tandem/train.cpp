// `tandem train`: flags to a TrainConfig; with --resume, the checkpoint's
// settings fill in the flags not given, and a given flag that disagrees
// with them is an error (a resumed run must be the same run; resume.h).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "failing_together.h"
#include "launched_group.h"
#include "model_on_devices.h"
#include "models.h"
#include "options.h"
#include "profile_flag.h"
#include "resume.h"
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
  std::string balance = "even";
  InvariantFlags invariant;
  std::optional<double> lr;  // default by optimizer
  std::string resume;
  ProfileFlags profile;
};

// The run's configuration from the flags (and the checkpoint's settings
// that --resume filled in).
TrainConfig configured(const TrainFlags& flags, const distributed::ProcessGroup* group) {
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
  if (config.metrics_every > 0 && config.metrics_path.empty()) {
    throw UsageError(
        "train: --metrics-every writes to the metrics file; name one with --metrics "
        "FILE");
  }
  // Under mpirun the shares are the processes'.
  config.balancing = parse_balance(
      flags.balance, group ? static_cast<size_t>(group->size()) : config.devices.size());
  config.balancing.micro_batch = parse_invariant(flags.invariant, group != nullptr);
  if (group && !config.balancing.even() && config.workers > 0) {
    throw UsageError(
        "train: --balance " + flags.balance +
        " under mpirun moves rows between the processes from step to step, which batches "
        "made ahead by --workers would miss; use --workers 0 (the default)");
  }
  if (group && config.batch_size < group->size()) {
    throw UsageError(
        "train: --batch-size " + std::to_string(config.batch_size) +
        " is the global batch; it must be at least the number of processes (" +
        std::to_string(group->size()) + ")");
  }
  return config;
}

int run_train(CLI::App& command, TrainFlags& flags) {
  const auto group = launched_group();
  std::optional<io::Checkpoint> resume;
  TrainConfig config;
  std::vector<std::string> changes;
  std::optional<ProfiledRun> profiled;
  set_up_together(group.get(), [&] {
    if (!flags.resume.empty()) {
      resume = io::load_checkpoint(flags.resume);
      fill_flags_from_checkpoint(command, *resume, flags.resume, group != nullptr);
      flags.config.resume_path = flags.resume;
      // Go on saving where the run was saved, unless told otherwise.
      if (command.get_option("--checkpoint")->count() == 0) {
        flags.config.checkpoint_path = flags.resume;
      }
    }
    config = configured(flags, group.get());
    if (resume) changes = check_same_run(config, *resume, flags.resume);
    profiled.emplace(flags.profile, group.get(), parse_step_range(flags.profile.steps));
    config.before_step = [&profiled](int64_t step) { profiled->before_step(step); };
  });
  const bool reports = !group || group->rank() == 0;
  if (reports) {
    for (const std::string& change : changes) std::cout << change << "\n";
  }
  int code = 0;
  try {
    code = train(config, std::move(resume), std::cout, group);
  } catch (...) {
    profiled->finish_alone();  // what was recorded up to the failure
    throw;
  }
  // A stopped run's ranks may not meet again: each writes its own.
  profiled->finish(std::cout, /*together=*/code == 0);
  return code;
}

}  // namespace

Action train_command(CLI::App& command) {
  auto flags = std::make_shared<TrainFlags>();
  TrainConfig& config = flags->config;
  add_data_flag(command, config.data_dir);
  command.add_option("--model", config.model, "the model")
      ->check(one_of("model", model_names()));
  add_devices_flag(command, flags->devices);
  add_balance_flag(command, flags->balance);
  add_invariant_flags(command, flags->invariant);
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
  command
      .add_option("--on-nonfinite",
                  config.on_nonfinite,
                  "a step whose loss is NaN or inf: stop the run (keeping the last "
                  "checkpoint) or skip its update")
      ->check(one_of("policy", {"stop", "skip"}));
  command.add_option("--checkpoint",
                     config.checkpoint_path,
                     "checkpoint file, written every epoch and on a stop");
  add_profile_flags(command, flags->profile);
  command.add_option(
      "--resume", flags->resume, "continue the run saved in this checkpoint");
  command.add_option(
      "--metrics", config.metrics_path, "JSON Lines file with one object per epoch");
  command
      .add_option("--metrics-every",
                  config.metrics_every,
                  "also write a record every N steps to --metrics: the steps' loss, "
                  "samples/s, each device's busy fraction and the shares (0: none)")
      ->check(whole_number(0));
  return [&command, flags] { return run_train(command, *flags); };
}

}  // namespace tandem::cli
