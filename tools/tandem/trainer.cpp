#include "trainer.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <sstream>

#include "commands.h"
#include "evaluation.h"
#include "failing_together.h"
#include "grad_ready_order.h"
#include "image_data.h"
#include "interrupt.h"
#include "model_on_devices.h"
#include "models.h"
#include "progress.h"
#include "run_position.h"
#include "step_metrics.h"
#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "tandem/data/data_loader.h"
#include "tandem/data/tensor_dataset.h"
#include "tandem/ops/factory.h"
#include "tandem/ops/loss.h"
#include "tandem/optim/adam.h"
#include "tandem/optim/sgd.h"
#include "writable_path.h"

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

std::string plural(int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// Checkpoint extras beside the run's settings, places and position.
constexpr const char* kProcesses = "processes";

std::string nonfinite_name(double value) {
  return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
}

// Whether every value of `state` (weights, buffers) is finite.
bool all_finite(const OrderedDict<std::string, Tensor>& state) {
  for (const auto& item : state) {
    const Tensor host = item.value().to(Device(kCPU)).contiguous();
    const auto finite = [&](auto* values) {
      return std::all_of(values, values + host.numel(), [](auto v) {
        return std::isfinite(static_cast<double>(v));
      });
    };
    if (host.dtype() == kFloat32 && !finite(host.data_ptr<float>())) return false;
    if (host.dtype() == kFloat64 && !finite(host.data_ptr<double>())) return false;
  }
  return true;
}

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
    set_up_together(group_.get(), [&] { prepare(resume ? &*resume : nullptr); });
    manual_seed(config.seed);
    nn::Sequential model = make_model(config.model);
    model->to(config.dtype);
    model_ = std::make_unique<ModelOnDevices>(
        model,
        config.devices,
        group_,
        nn::DistributedDataParallelOptions().grad_ready_order(resumed_ready_order_),
        config.balancing);
    optimizer_ =
        make_optimizer(config.optimizer, model_->model()->parameters(), config.lr);
    if (resume) restore(*resume);
  }

  int run() {
    describe();
    InterruptScope interrupt;
    metrics_ = open_metrics();
    std::ofstream& metrics = metrics_;
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
         << plural(position_.step, "step");
    if (position_.skipped > 0) {
      out_ << ", " << position_.skipped << " skipped for a non-finite loss";
    }
    out_ << ") in " << format_duration(seconds) << "; test accuracy "
         << std::setprecision(4) << std::fixed << last->accuracy << ", test loss "
         << last->loss << "\n";
    if (saved_) out_ << "checkpoint: " << config_.checkpoint_path << "\n";
    return 0;
  }

 private:
  // What every process does alike before any collective (see
  // failing_together.h): the devices, the output paths, the data, the
  // resumed position.
  void prepare(const io::Checkpoint* resume) {
    check_devices(config_.devices, group_ != nullptr);
    if (leader_ && !config_.checkpoint_path.empty()) {
      check_writable(config_.checkpoint_path, "checkpoint");
    }
    if (leader_ && !config_.metrics_path.empty()) {
      check_writable(config_.metrics_path, "metrics file");
    }
    train_ = load_split(config_.data_dir, /*train=*/true);
    test_ = load_split(config_.data_dir, /*train=*/false);
    data::DataLoaderOptions loading;
    loading.batch_size(config_.batch_size)
        .workers(config_.workers)
        // Workers pin the batches; train_step copies them non_blocking.
        .pin_memory(config_.devices.front().is_cuda())
        .shard(group_ ? group_->rank() : 0, group_ ? group_->size() : 1);
    // Under mpirun with shares, each process reads the rows the plan gives
    // it (the same plan on every process: DistributedDataParallel::cut).
    if (group_ && !config_.balancing.even()) {
      loading.shard_cut([this](int64_t rows) { return model_->cut(rows); });
    }
    loader_ = data::make_data_loader(
        data::TensorDataset(train_.images, train_.targets),
        data::samplers::RandomSampler(train_.images.size(0), config_.seed),
        loading);
    if (resume) {
      position_ = resumed_position(
          *resume, config_.resume_path, config_.epochs, loader_->num_batches());
      resumed_ready_order_ = recorded_grad_ready_order(*resume, config_.resume_path);
    }
  }

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
    if (config_.balancing.micro_batch > 0) {
      out_ << " (invariant: micro-batches of " << config_.balancing.micro_batch << ")";
    } else if (config_.devices.size() > 1) {
      out_ << " (" << per_device << " per device)";
    }
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
    const std::string written = recorded_placement(checkpoint);
    if (!written.empty() && written != placement()) {
      out_ << "note: the checkpoint was written on " << written << "; continuing on "
           << placement()
           << (config_.balancing.micro_batch > 0
                   ? " (invariant mode: the numbers stay those of an uninterrupted run, "
                     "bit for bit)\n"
                   : " (the batch splits differently, so the numbers will differ from an "
                     "uninterrupted run in the last bits)\n");
    }
    // Saving where it resumed from, the run's last checkpoint is that one.
    if (config_.checkpoint_path == config_.resume_path) saved_at_ = position_text();
  }

  // "cpu:0,cpu:1", or "cuda:0 in each of 2 processes".
  std::string placement() const {
    return model_->device_list() +
           (group_ ? " in each of " + std::to_string(group_->size()) + " processes" : "");
  }
  static std::string recorded_placement(const io::Checkpoint& checkpoint) {
    auto devices = checkpoint.extra.find("devices");
    if (devices == checkpoint.extra.end()) return "";
    auto processes = checkpoint.extra.find(kProcesses);
    const bool several = processes != checkpoint.extra.end() && processes->second != "1";
    return devices->second +
           (several ? " in each of " + processes->second + " processes" : "");
  }

  std::ofstream open_metrics() {
    std::ofstream metrics;
    if (config_.metrics_path.empty() || !leader_) return metrics;
    const bool resumed = position_.epoch > 0 || position_.batch > 0;
    errno = 0;
    metrics.open(config_.metrics_path, resumed ? std::ios::app : std::ios::trunc);
    TANDEM_CHECK(metrics.good(),
                 "cannot write the metrics file ",
                 config_.metrics_path,
                 ": ",
                 errno != 0 ? std::strerror(errno) : "the stream failed to open");
    return metrics;
  }

  // In a distributed run every process stops at the same step: a signal
  // counts once the step's reduction has told every process about it.
  bool should_stop(const InterruptScope& interrupt) const {
    return (group_ ? interrupted_anywhere_ : interrupt.requested()) ||
           (config_.max_steps > 0 && position_.step >= config_.max_steps);
  }

  // One training step on this process's part of the batch; returns the
  // mean loss over the whole (global) batch, and updates the weights only
  // when that is finite.
  double train_step(const data::Batch& batch, const InterruptScope& interrupt) {
    optimizer_->zero_grad();
    const Tensor target = batch.target.to(model_->output_device(), /*non_blocking=*/true);
    const int64_t rows = batch.target.size(0);
    const Tensor logits = model_->forward(batch.data);
    double loss_value = 0;
    if (!group_) {
      const Tensor loss = cross_entropy(logits, target);
      loss.backward();
      loss_value = loss.item<double>();
    } else {
      // DistributedDataParallel averages the processes' gradients;
      // weighting each process's mean loss by its share of the batch makes
      // that average the gradient of the whole batch's mean loss, also
      // when the parts differ in size (an empty part contributes zeros).
      const Tensor loss =
          cross_entropy(logits, target, Tensor(), rows > 0 ? kMean : kSum);
      // (With shares DistributedDataParallel weights the gradients itself.)
      const double weight = model_->balanced()
                                ? 1.0
                                : static_cast<double>(rows * group_->size()) /
                                      static_cast<double>(batch.global_size);
      (weight == 1.0 ? loss : loss * weight).backward();
      Tensor sums = empty({2}, kFloat64);
      sums.data_ptr<double>()[0] = loss.item<double>() * static_cast<double>(rows);
      sums.data_ptr<double>()[1] = interrupt.requested() ? 1.0 : 0.0;
      group_->allreduce(sums).wait();
      interrupted_anywhere_ = sums.data_ptr<double>()[1] > 0;
      loss_value = sums.data_ptr<double>()[0] / static_cast<double>(batch.global_size);
    }
    if (std::isfinite(loss_value)) optimizer_->step();
    return loss_value;
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
      if (config_.before_step) config_.before_step(position_.step + 1);
      const double loss = train_step(batch, interrupt);
      if (!std::isfinite(loss) && config_.on_nonfinite == "stop") {
        progress_->finish();
        fail_nonfinite("the loss is " + nonfinite_name(loss) + " at epoch " +
                           std::to_string(position_.epoch + 1) + ", step " +
                           std::to_string(position_.step + 1) + " (batch " +
                           std::to_string(batch.index + 1) +
                           "), so that step updated nothing",
                       "A lower --lr may help; --on-nonfinite skip skips such steps");
      }
      ++position_.step;
      position_.batch = batch.index + 1;
      if (model_->balanced())
        progress_->set_note("shares " + shares_text(model_->shares()));
      if (std::isfinite(loss)) {
        progress_->step(loss, batch.global_size);
      } else {
        ++position_.skipped;
        progress_->skip();
      }
      position_.loss_sum = progress_->loss_sum();
      position_.samples = progress_->epoch_samples();
      const std::string record =
          step_metrics_.step(position_.epoch + 1,
                             position_.step,
                             loss,
                             std::isfinite(loss) ? batch.global_size : 0,
                             model_->shares());
      if (!record.empty() && metrics_.is_open()) metrics_ << record << std::flush;
    }
    progress_->finish();
    return true;
  }

  // Ends a run that met a non-finite number: process 0 says where, what is
  // kept and `advice`; the others end quietly (every process judged alike).
  [[noreturn]] void fail_nonfinite(const std::string& what,
                                   const std::string& advice) const {
    if (!leader_) throw QuietExit(1);
    const std::string kept =
        config_.checkpoint_path.empty() ? "no checkpoint was asked for"
        : saved_at_.empty()             ? "no checkpoint was written"
                            : config_.checkpoint_path + " keeps the run at " + saved_at_;
    throw Error("train: " + what + "; stopped (" + kept + "). " + advice);
  }

  // "epoch 2, batch 0 (step 20)": where a checkpoint written now leaves it.
  std::string position_text() const {
    return "epoch " + std::to_string(position_.epoch) + ", batch " +
           std::to_string(position_.batch) + " (step " + std::to_string(position_.step) +
           ")";
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
    position_ = {position_.epoch + 1, 0, position_.step, 0.0, 0, position_.skipped};
    save_checkpoint();  // before the metrics line: a crash between them loses no state
    out_ << "epoch " << position_.epoch << "/" << config_.epochs << "  train_loss "
         << std::fixed << std::setprecision(4) << train_loss << "  test_loss "
         << test.loss << "  test_accuracy " << test.accuracy << "  "
         << std::setprecision(0) << rate << " samples/s  " << format_duration(seconds);
    if (model_->balanced()) out_ << "  shares " << shares_text(model_->shares());
    out_ << "\n";
    if (metrics.is_open()) {
      metrics << "{\"epoch\": " << position_.epoch
              << ", \"train_loss\": " << json_number(train_loss)
              << ", \"test_loss\": " << json_number(test.loss)
              << ", \"test_accuracy\": " << json_number(test.accuracy)
              << ", \"samples_per_second\": " << json_number(rate)
              << ", \"seconds\": " << json_number(seconds)
              << ", \"steps\": " << position_.step
              << ", \"skipped_steps\": " << position_.skipped << ", \"devices\": \""
              << model_->device_list()
              << "\", \"shares\": " << json_numbers(model_->shares()) << "}\n"
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
    // Every process holds the same weights, so all judge them alike.
    OrderedDict<std::string, Tensor> state = model_->model()->state_dict();
    if (!all_finite(state)) {
      fail_nonfinite("the weights are no longer finite after step " +
                         std::to_string(position_.step) + ", so they were not saved",
                     "A lower --lr may help");
    }
    saved_ = true;
    saved_at_ = position_text();
    if (!leader_) return;  // the replicas are equal: process 0 writes
    io::Checkpoint checkpoint;
    checkpoint.model = std::move(state);
    checkpoint.optimizer = optimizer_->state_dict();
    record_position(position_, checkpoint);
    checkpoint.rng_states["default"] = default_generator().get_state();
    checkpoint.extra.merge(run_settings(config_));
    checkpoint.extra.merge(run_places(config_));
    checkpoint.extra["devices"] = model_->device_list();
    checkpoint.extra[kProcesses] = std::to_string(group_ ? group_->size() : 1);
    record_grad_ready_order(model_->grad_ready_order(), checkpoint);
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
  std::vector<size_t> resumed_ready_order_;  // the checkpoint's, for the DDP
  std::optional<EpochProgress> progress_;
  std::ofstream metrics_;  // open on the leader when --metrics names a file
  StepMetrics step_metrics_{config_.metrics_every, config_.devices};
  std::chrono::steady_clock::time_point epoch_start_;
  bool saved_ = false;
  std::string saved_at_;  // where the last checkpoint left the run, or ""
};

}  // namespace

std::map<std::string, std::string> run_settings(const TrainConfig& config) {
  return {{"model", config.model},
          {"dtype", std::string(dtype_name(config.dtype))},
          {"optimizer", config.optimizer},
          {"lr", json_number(config.lr)},
          {"lr_schedule", config.lr_schedule},
          {"epochs", std::to_string(config.epochs)},
          {"batch_size", std::to_string(config.batch_size)},
          {"seed", std::to_string(config.seed)},
          {"on_nonfinite", config.on_nonfinite},
          {"micro_batch", std::to_string(config.balancing.micro_batch)}};
}

std::map<std::string, std::string> run_places(const TrainConfig& config) {
  std::string devices;
  for (const Device& device : config.devices) {
    if (!devices.empty()) devices += ',';
    devices += device.str();
  }
  return {{"data", config.data_dir}, {"devices", devices}};
}

double epoch_lr(const TrainConfig& config, int64_t epoch) {
  if (config.lr_schedule == "constant") return config.lr;
  const double progress = static_cast<double>(epoch) / static_cast<double>(config.epochs);
  return config.lr * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

int train(const TrainConfig& config,
          std::optional<io::Checkpoint> resume,
          std::ostream& out,
          std::shared_ptr<distributed::ProcessGroup> group) {
  Run run(config, std::move(resume), out, std::move(group));
  return run.run();
}

}  // namespace tandem::cli
