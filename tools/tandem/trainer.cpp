#include "trainer.h"

#include <charconv>
#include <cmath>
#include <csignal>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <sstream>

#include "commands.h"
#include "evaluation.h"
#include "image_data.h"
#include "interrupt.h"
#include "model_on_devices.h"
#include "models.h"
#include "progress.h"
#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "tandem/data/data_loader.h"
#include "tandem/data/tensor_dataset.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/optim/adam.h"
#include "tandem/optim/sgd.h"

namespace tandem::cli {
namespace {

constexpr int64_t kEvalBatchSize = 1000;

std::unique_ptr<optim::Optimizer> make_optimizer(const std::string& name,
                                                 const std::vector<Tensor>& params,
                                                 double lr) {
  if (name == "sgd") {
    return std::make_unique<optim::SGD>(params, optim::SGDOptions(lr).momentum(0.9));
  }
  if (name == "adam")
    return std::make_unique<optim::Adam>(params, optim::AdamOptions(lr));
  throw UsageError("unknown optimizer '" + name + "' (expected sgd|adam)");
}

// The shortest text that reads back as `value` (JSON has no NaN: null).
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, value);
  return std::string(text, end);
}

std::string plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// The learning rate of `epoch` (from 0): the base rate throughout, or
// cosine annealing from it towards 0 over the run, one value per epoch (so
// a resumed run recomputes it from the epoch alone).
double epoch_lr(const TrainConfig& config, int64_t epoch) {
  if (config.lr_schedule == "constant") return config.lr;
  const double progress = static_cast<double>(epoch) / static_cast<double>(config.epochs);
  return config.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

// Where the run stands: the next batch to train is `batch` of `epoch`; the
// epoch's batches so far had losses summing to `loss_sum` over `samples`.
struct Position {
  int64_t epoch = 0;
  int64_t batch = 0;
  int64_t step = 0;  // optimizer steps taken in all
  double loss_sum = 0;
  int64_t samples = 0;
};

// Checkpoint extras beside the run's settings.
constexpr const char* kEpochLossSum = "epoch_loss_sum";
constexpr const char* kEpochSamples = "epoch_samples";
constexpr const char* kDevices = "devices";

class Run {
 public:
  Run(const TrainConfig& config,
      std::optional<io::Checkpoint> resume,
      std::ostream& out,
      std::shared_ptr<distributed::ProcessGroup> group)
      : config_(config),
        group_(std::move(group)),
        leader_(!group_ || group_->rank() == 0),
        out_(leader_ ? out : silent_) {
    manual_seed(config.seed);
    nn::Sequential model = make_model(config.model);
    model->to(config.dtype);
    model_ = std::make_unique<ModelOnDevices>(model, config.devices, group_);
    optimizer_ =
        make_optimizer(config.optimizer, model_->model()->parameters(), config.lr);
    train_ = load_split(config.data_dir, /*train=*/true);
    test_ = load_split(config.data_dir, /*train=*/false);
    loader_ = data::make_data_loader(
        data::TensorDataset(train_.images, train_.targets),
        data::samplers::RandomSampler(train_.images.size(0), config.seed),
        data::DataLoaderOptions()
            .batch_size(config.batch_size)
            .workers(config.workers)
            // Workers pin the batches; train_step copies them non_blocking.
            .pin_memory(model_->output_device().is_cuda())
            .shard(group_ ? group_->rank() : 0, group_ ? group_->size() : 1));
    if (resume) restore(*resume);
  }

  int run() {
    describe();
    InterruptScope interrupt;
    std::ofstream metrics = open_metrics();
    const auto start = std::chrono::steady_clock::now();
    std::optional<Evaluation> last;
    while (position_.epoch < config_.epochs) {
      if (should_stop(interrupt) || !train_epoch(interrupt)) return stop(interrupt);
      last = finish_epoch(metrics);
    }
    if (!last) last = evaluate(*model_, test_, kEvalBatchSize);  // nothing left to train
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out_ << "done: " << plural(config_.epochs, "epoch") << " ("
         << plural(position_.step, "step") << ") in " << format_duration(seconds)
         << "; test accuracy " << std::setprecision(4) << std::fixed << last->accuracy
         << ", test loss " << last->loss << "\n";
    if (saved_) out_ << "checkpoint: " << config_.checkpoint_path << "\n";
    return 0;
  }

 private:
  void describe() {
    const int64_t per_device =
        (config_.batch_size + static_cast<int64_t>(config_.devices.size()) - 1) /
        static_cast<int64_t>(config_.devices.size());
    out_ << "training " << config_.model
         << (config_.dtype == kFloat32 ? ""
                                       : " in " + std::string(dtype_name(config_.dtype)))
         << " on " << model_->device_list()
         << (group_ ? " in each of " + std::to_string(group_->size()) + " processes" : "")
         << ": " << train_.size() << " training and " << test_.size()
         << " test images from " << config_.data_dir << "; batch " << config_.batch_size;
    if (config_.devices.size() > 1) out_ << " (" << per_device << " per device)";
    if (group_) {
      out_ << " (" << config_.batch_size / group_->size()
           << (config_.batch_size % group_->size() ? "+" : "") << " per process)";
    }
    out_ << ", " << config_.optimizer << " lr " << config_.lr << " ("
         << config_.lr_schedule << "), " << plural(config_.epochs, "epoch") << "\n";
    if (position_.epoch > 0 || position_.batch > 0) {
      out_ << "resuming at epoch " << position_.epoch + 1 << ", batch " << position_.batch
           << " (step " << position_.step << ")\n";
    }
  }

  void restore(const io::Checkpoint& checkpoint) {
    model_->model()->load_state_dict(checkpoint.model);
    optimizer_->load_state_dict(checkpoint.optimizer);
    if (auto it = checkpoint.rng_states.find("default");
        it != checkpoint.rng_states.end()) {
      default_generator().set_state(it->second);
    }
    position_ = {checkpoint.epoch,
                 checkpoint.batch_in_epoch,
                 checkpoint.step,
                 std::stod(extra_or(checkpoint, kEpochLossSum, "0")),
                 std::stoll(extra_or(checkpoint, kEpochSamples, "0"))};
    const std::string devices = extra_or(checkpoint, kDevices, "");
    if (!devices.empty() && devices != model_->device_list()) {
      out_ << "note: the checkpoint was written on " << devices << "; continuing on "
           << model_->device_list()
           << " (the batch splits differently, so the numbers will differ from an "
              "uninterrupted run in the last bits)\n";
    }
    TANDEM_CHECK(position_.batch <= loader_->num_batches(),
                 "resume: the checkpoint stopped at batch ",
                 position_.batch,
                 " of an epoch, but an epoch has ",
                 loader_->num_batches(),
                 " batches of this data");
  }

  std::ofstream open_metrics() {
    std::ofstream metrics;
    if (config_.metrics_path.empty() || !leader_) return metrics;
    const bool resumed = position_.epoch > 0 || position_.batch > 0;
    metrics.open(config_.metrics_path, resumed ? std::ios::app : std::ios::trunc);
    TANDEM_CHECK(metrics.good(), "cannot write the metrics file ", config_.metrics_path);
    return metrics;
  }

  static std::string extra_or(const io::Checkpoint& checkpoint,
                              const char* key,
                              const char* fallback) {
    auto it = checkpoint.extra.find(key);
    return it == checkpoint.extra.end() ? fallback : it->second;
  }

  // In a distributed run every process stops at the same step: a signal
  // counts once the step's reduction has told every process about it.
  bool should_stop(const InterruptScope& interrupt) const {
    return (group_ ? interrupted_anywhere_ : interrupt.requested()) ||
           (config_.max_steps > 0 && position_.step >= config_.max_steps);
  }

  // One training step on this process's part of the batch; returns the
  // mean loss over the whole (global) batch.
  double train_step(const data::Batch& batch, const InterruptScope& interrupt) {
    optimizer_->zero_grad();
    const Tensor target = batch.target.to(model_->output_device(), /*non_blocking=*/true);
    const int64_t rows = batch.target.size(0);
    const Tensor logits = model_->forward(batch.data);
    if (!group_) {
      const Tensor loss = cross_entropy(logits, target);
      loss.backward();
      optimizer_->step();
      return loss.item<double>();
    }
    // DistributedDataParallel averages the processes' gradients; weighting
    // each process's mean loss by its share of the batch makes that average
    // the gradient of the whole batch's mean loss, also when the parts
    // differ in size (an empty part contributes zeros).
    const Tensor loss = cross_entropy(logits, target, Tensor(), rows > 0 ? kMean : kSum);
    const double weight = static_cast<double>(rows * group_->size()) /
                          static_cast<double>(batch.global_size);
    (weight == 1.0 ? loss : loss * weight).backward();
    optimizer_->step();
    Tensor sums = empty({2}, kFloat64);
    sums.data_ptr<double>()[0] = loss.item<double>() * static_cast<double>(rows);
    sums.data_ptr<double>()[1] = interrupt.requested() ? 1.0 : 0.0;
    group_->allreduce(sums).wait();
    interrupted_anywhere_ = sums.data_ptr<double>()[1] > 0;
    return sums.data_ptr<double>()[0] / static_cast<double>(batch.global_size);
  }

  // Trains the rest of the current epoch; false when stopped early (a
  // signal or --max-steps), checked before each step.
  bool train_epoch(const InterruptScope& interrupt) {
    progress_.emplace(out_,
                      is_terminal(out_),
                      position_.epoch + 1,
                      config_.epochs,
                      loader_->num_batches(),
                      position_.batch,
                      position_.loss_sum,
                      position_.samples);
    epoch_start_ = std::chrono::steady_clock::now();
    for (auto& group : optimizer_->param_groups()) {
      group.options().set_lr(epoch_lr(config_, position_.epoch));
    }
    for (const data::Batch& batch : loader_->epoch(position_.epoch, position_.batch)) {
      if (should_stop(interrupt)) {
        progress_->finish();
        return false;
      }
      const double loss = train_step(batch, interrupt);
      ++position_.step;
      position_.batch = batch.index + 1;
      progress_->step(loss, batch.global_size);
      position_.loss_sum = progress_->loss_sum();
      position_.samples = progress_->epoch_samples();
    }
    progress_->finish();
    return true;
  }

  Evaluation finish_epoch(std::ofstream& metrics) {
    const Evaluation test = evaluate(*model_, test_, kEvalBatchSize);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_)
            .count();
    const double train_seconds = progress_->seconds();
    const double rate =
        train_seconds > 0 ? static_cast<double>(progress_->samples()) / train_seconds : 0;
    const double train_loss = progress_->mean_loss();
    position_ = {position_.epoch + 1, 0, position_.step, 0.0, 0};
    save_checkpoint();  // before the metrics line: a crash between them loses no state
    out_ << "epoch " << position_.epoch << "/" << config_.epochs << "  train_loss "
         << std::fixed << std::setprecision(4) << train_loss << "  test_loss "
         << test.loss << "  test_accuracy " << test.accuracy << "  "
         << std::setprecision(0) << rate << " samples/s  " << format_duration(seconds)
         << "\n";
    if (metrics.is_open()) {
      metrics << "{\"epoch\": " << position_.epoch
              << ", \"train_loss\": " << json_number(train_loss)
              << ", \"test_loss\": " << json_number(test.loss)
              << ", \"test_accuracy\": " << json_number(test.accuracy)
              << ", \"samples_per_second\": " << json_number(rate)
              << ", \"seconds\": " << json_number(seconds)
              << ", \"steps\": " << position_.step << ", \"devices\": \""
              << model_->device_list() << "\"}\n"
              << std::flush;
    }
    return test;
  }

  int stop(const InterruptScope& interrupt) {
    const bool interrupted = interrupt.requested() || interrupted_anywhere_;
    std::string why = interrupt.requested()
                          ? std::string("stopped by ") + interrupt.signal_name()
                      : interrupted_anywhere_
                          ? std::string("stopped by a signal to another process")
                          : "stopped at --max-steps " + std::to_string(config_.max_steps);
    out_ << why << " after step " << position_.step << " (epoch " << position_.epoch + 1
         << ", batch " << position_.batch << ")";
    if (config_.checkpoint_path.empty()) {
      out_ << "; no checkpoint was asked for (--checkpoint PATH)\n";
    } else {
      save_checkpoint();
      out_ << "; checkpoint: " << config_.checkpoint_path << " (continue with --resume "
           << config_.checkpoint_path << ")\n";
    }
    if (!interrupted) return 0;
    return interrupt.requested() ? interrupt.exit_code() : 128 + SIGINT;
  }

  void save_checkpoint() {
    if (config_.checkpoint_path.empty()) return;
    saved_ = true;
    if (!leader_) return;  // the replicas are equal: process 0 writes
    io::Checkpoint checkpoint;
    checkpoint.model = model_->model()->state_dict();
    checkpoint.optimizer = optimizer_->state_dict();
    checkpoint.epoch = position_.epoch;
    checkpoint.batch_in_epoch = position_.batch;
    checkpoint.step = position_.step;
    checkpoint.rng_states["default"] = default_generator().get_state();
    checkpoint.extra = run_settings(config_);
    checkpoint.extra[kEpochLossSum] = json_number(position_.loss_sum);
    checkpoint.extra[kEpochSamples] = std::to_string(position_.samples);
    checkpoint.extra[kDevices] = model_->device_list();
    io::save_checkpoint(checkpoint, config_.checkpoint_path);
  }

  const TrainConfig& config_;
  std::shared_ptr<distributed::ProcessGroup> group_;  // null: one process
  bool leader_;                // prints, writes checkpoints and metrics
  std::ostringstream silent_;  // what the other processes would print
  std::ostream& out_;
  bool interrupted_anywhere_ = false;
  std::unique_ptr<ModelOnDevices> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  ImageSplit train_, test_;
  std::unique_ptr<data::DataLoader<data::TensorDataset, data::samplers::RandomSampler>>
      loader_;
  Position position_;
  std::optional<EpochProgress> progress_;
  std::chrono::steady_clock::time_point epoch_start_;
  bool saved_ = false;
};

}  // namespace

std::map<std::string, std::string> run_settings(const TrainConfig& config) {
  std::ostringstream lr;
  lr << std::setprecision(17) << config.lr;
  return {{"model", config.model},
          {"dtype", std::string(dtype_name(config.dtype))},
          {"optimizer", config.optimizer},
          {"lr", lr.str()},
          {"lr_schedule", config.lr_schedule},
          {"batch_size", std::to_string(config.batch_size)},
          {"seed", std::to_string(config.seed)}};
}

int train(const TrainConfig& config,
          std::optional<io::Checkpoint> resume,
          std::ostream& out,
          std::shared_ptr<distributed::ProcessGroup> group) {
  Run run(config, std::move(resume), out, std::move(group));
  return run.run();
}

}  // namespace tandem::cli
