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
#include "options.h"
#include "profile_flag.h"
#include "resume.h"
#include "tandem/core/device_guard.h"
#include "trainer.h"
#include "training_task.h"

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
  // Defaults by model (model_defaults).
  std::optional<int64_t> batch_size;
  std::optional<std::string> optimizer;
  std::optional<double> lr;  // also by optimizer
  std::optional<std::string> lr_schedule;
  bool data_given = false;  // lstm-lm reads the bible command unless --data names a file
  std::string resume;
  ProfileFlags profile;
};

// What a model trains with unless the flags say otherwise.
struct ModelDefaults {
  int64_t batch_size;
  std::string optimizer;
  double sgd_lr, adam_lr;
  std::string lr_schedule;
};

ModelDefaults model_defaults(const std::string& model) {
  if (model == "lstm-lm") return {32, "sgd", 20, 1e-3, "plateau"};
  if (model == "dcgan") return {64, "adam", 0, 2e-4, "constant"};
  return {256, "sgd", 0.05, 1e-3, "cosine"};
}

// The flags the language model and the GAN cannot honour: they train in
// one process, with DataParallel's chunk rule.
void refuse_for_own_loop(const TrainFlags& flags,
                         const TrainConfig& config,
                         const distributed::ProcessGroup* group) {
  const std::string model = "train: --model " + config.model;
  if (group) {
    throw UsageError(model +
                     " trains in one process (DataParallel over --devices); under "
                     "mpirun train mlp, cnn or resnet");
  }
  if (!config.balancing.even()) {
    throw UsageError(model +
                     " cuts its batches by DataParallel's chunk rule; --balance " +
                     flags.balance + " is for mlp, cnn and resnet");
  }
  if (config.balancing.micro_batch > 0) {
    throw UsageError(model +
                     " has no invariant mode (--invariant, --micro-batch); it is "
                     "for mlp, cnn and resnet");
  }
  if (config.augment) {
    throw UsageError(model +
                     " has no images to augment; --augment is for mlp, cnn and "
                     "resnet");
  }
  if (config.model == "lstm-lm" && config.workers > 0) {
    throw UsageError(model +
                     " reads its segments in place; --workers is for the image "
                     "models");
  }
  if (config.model == "dcgan" && config.optimizer != "adam") {
    throw UsageError(model +
                     " trains both networks with adam (betas 0.5, 0.999); "
                     "--optimizer " +
                     config.optimizer + " is for the other models");
  }
}

// The run's configuration from the flags (and the checkpoint's settings
// that --resume filled in).
TrainConfig configured(const TrainFlags& flags, const distributed::ProcessGroup* group) {
  TrainConfig config = flags.config;
  const ModelDefaults defaults = model_defaults(config.model);
  config.batch_size = flags.batch_size.value_or(defaults.batch_size);
  config.optimizer = flags.optimizer.value_or(defaults.optimizer);
  config.lr_schedule = flags.lr_schedule.value_or(defaults.lr_schedule);
  config.dtype = flags.dtype == "float64" ? kFloat64 : kFloat32;
  config.lr =
      flags.lr.value_or(config.optimizer == "adam" ? defaults.adam_lr : defaults.sgd_lr);
  if (config.model == "lstm-lm" && !flags.data_given) config.data_dir.clear();
  if (config.lr_schedule == "plateau" && config.model != "lstm-lm") {
    throw UsageError(
        "train: --lr-schedule plateau follows a validation split, which only lstm-lm "
        "has; use cosine or constant");
  }
  if (!config.samples_dir.empty() && config.model != "dcgan") {
    throw UsageError("train: --samples is where dcgan draws its samples; --model " +
                     config.model + " draws none");
  }
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
  config.balancing.micro_batch = parse_invariant(flags.invariant);
  if (config.model == "lstm-lm" || config.model == "dcgan") {
    refuse_for_own_loop(flags, config, group);
  }
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
    flags.data_given = command.get_option("--data")->count() > 0;
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
  add_data_flag(command, config.data_dir)
      ->description(
          "folder of the MNIST-format files (lstm-lm: a file of verses, \"Ge1:1 "
          "text\" a line; default: the text of Debian's bible-kjv)");
  command
      .add_option("--model",
                  config.model,
                  "the model: a classifier (mlp, cnn, resnet), the lstm-lm language "
                  "model on the King James Bible, or the dcgan")
      ->check(one_of("model", train_model_names()));
  add_devices_flag(command, flags->devices);
  add_balance_flag(command, flags->balance);
  add_invariant_flags(command, flags->invariant);
  command
      .add_option("--dtype",
                  flags->dtype,
                  "float32, or float64 (slower; for checking results against a "
                  "reference)")
      ->check(one_of("dtype", {"float32", "float64"}));
  command.add_option("--epochs", config.epochs, "passes over the training data")
      ->check(whole_number(1));
  command
      .add_option("--batch-size",
                  flags->batch_size,
                  "images per step, split across the devices (and the processes under "
                  "mpirun); lstm-lm: columns of the token stream (default 256; "
                  "lstm-lm 32, dcgan 64)")
      ->check(whole_number(1));
  command.add_flag(
      "--augment",
      config.augment,
      "mlp, cnn, resnet: mirror each training image left-right at random and "
      "shift it by up to 2 pixels, drawn from the seed, epoch and image (so "
      "a resumed run and any --devices list draw alike)");
  command
      .add_option("--optimizer",
                  flags->optimizer,
                  "sgd (momentum 0.9; plain for lstm-lm) or adam (betas 0.5, 0.999 for "
                  "dcgan, which trains with it)")
      ->check(one_of("optimizer", {"sgd", "adam"}));
  command
      .add_option("--lr",
                  flags->lr,
                  "learning rate (default 0.05 for sgd, 0.001 for adam; lstm-lm: 20 for "
                  "sgd; dcgan: 0.0002)")
      ->check(positive_number());
  command
      .add_option("--weight-decay",
                  config.weight_decay,
                  "L2 penalty added to every parameter's gradient, as PyTorch's "
                  "optimizers' weight_decay (default 0: none)")
      ->check(non_negative_number());
  command
      .add_option("--lr-schedule",
                  flags->lr_schedule,
                  "cosine (annealed to 0 over the epochs), constant (dcgan's default) "
                  "or plateau (lstm-lm's default: a quarter when the validation loss "
                  "stops falling)")
      ->check(one_of("schedule", {"cosine", "constant", "plateau"}));
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
  command.add_option("--samples",
                     config.samples_dir,
                     "dcgan: the folder for each epoch's grid of samples, "
                     "dcgan-epoch-N.png (default: the current folder)");
  command
      .add_option("--metrics-every",
                  config.metrics_every,
                  "also write a record every N steps to --metrics: the steps' loss, "
                  "samples/s, each device's busy fraction and the shares (0: none)")
      ->check(whole_number(0));
  return [&command, flags] { return run_train(command, *flags); };
}

}  // namespace tandem::cli
