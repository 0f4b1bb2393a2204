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
#include <optional>
#include <sstream>

#include "commands.h"
#include "failing_together.h"
#include "interrupt.h"
#include "progress.h"
#include "run_position.h"
#include "step_metrics.h"
#include "tandem/core/error.h"
#include "tandem/core/generator.h"
#include "training_task.h"
#include "writable_path.h"

namespace tandem::cli {
namespace {

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
    task_->make_models();
    if (resume) restore(*resume);
  }

  int run() {
    out_ << "training " << task_->description() << ", " << plural(config_.epochs, "epoch")
         << "\n";
    if (position_.epoch > 0 || position_.batch > 0) {
      out_ << "resuming at epoch " << position_.epoch + 1 << ", batch " << position_.batch
           << " (step " << position_.step << ")\n";
    }
    InterruptScope interrupt;
    metrics_ = open_metrics();
    const auto start = std::chrono::steady_clock::now();
    std::optional<Scores> last;
    while (position_.epoch < config_.epochs) {
      if (should_stop(interrupt) || !train_epoch(interrupt)) return stop(interrupt);
      last = finish_epoch();
    }
    const Scores final = task_->final_scores(position_.epoch, last ? &*last : nullptr);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out_ << "done: " << plural(config_.epochs, "epoch") << " ("
         << plural(position_.step, "step");
    if (position_.skipped > 0) {
      out_ << ", " << position_.skipped << " skipped for a non-finite loss";
    }
    out_ << ") in " << format_duration(seconds) << std::setprecision(4) << std::fixed;
    const char* separator = "; ";
    for (const auto& [name, value] : final) {
      std::string words = name;
      std::replace(words.begin(), words.end(), '_', ' ');
      out_ << separator << words << " " << value;
      separator = ", ";
    }
    out_ << "\n";
    if (saved_) out_ << "checkpoint: " << config_.checkpoint_path << "\n";
    return 0;
  }

 private:
  // What every process does alike before any collective (see
  // failing_together.h): the output paths, the task (devices, data,
  // models), the resumed position.
  void prepare(const io::Checkpoint* resume) {
    if (leader_ && !config_.checkpoint_path.empty()) {
      check_writable(config_.checkpoint_path, "checkpoint");
    }
    if (leader_ && !config_.metrics_path.empty()) {
      check_writable(config_.metrics_path, "metrics file");
    }
    task_ = make_training_task(config_, resume, group_);
    if (resume) {
      position_ = resumed_position(
          *resume, config_.resume_path, config_.epochs, task_->batches_per_epoch());
    }
  }

  void restore(const io::Checkpoint& checkpoint) {
    task_->restore(checkpoint);
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
    return task_->device_list() +
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

  // Trains the rest of the current epoch; false when stopped early (a
  // signal or --max-steps), checked before each step.
  bool train_epoch(const InterruptScope& interrupt) {
    progress_.emplace(out_,
                      is_terminal(out_),
                      position_.epoch + 1,
                      config_.epochs,
                      task_->batches_per_epoch(),
                      position_.batch,
                      position_.loss_sum,
                      position_.samples);
    epoch_start_ = std::chrono::steady_clock::now();
    task_->begin_epoch(position_.epoch, position_.batch);
    while (position_.batch < task_->batches_per_epoch()) {
      if (should_stop(interrupt)) {
        progress_->finish();
        return false;
      }
      if (config_.before_step) config_.before_step(position_.step + 1);
      const StepOutcome outcome = task_->step(interrupt);
      interrupted_anywhere_ = outcome.stop_anywhere;
      const double loss = outcome.loss;
      if (!std::isfinite(loss) && config_.on_nonfinite == "stop") {
        progress_->finish();
        fail_nonfinite("the loss is " + nonfinite_name(loss) + " at epoch " +
                           std::to_string(position_.epoch + 1) + ", step " +
                           std::to_string(position_.step + 1) + " (batch " +
                           std::to_string(outcome.batch + 1) +
                           "), so that step updated nothing",
                       "A lower --lr may help; --on-nonfinite skip skips such steps");
      }
      ++position_.step;
      position_.batch = outcome.batch + 1;
      if (task_->balanced())
        progress_->set_note("shares " + shares_text(task_->shares()));
      if (std::isfinite(loss)) {
        progress_->step(loss, outcome.samples);
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
                             std::isfinite(loss) ? outcome.samples : 0,
                             task_->shares());
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

  Scores finish_epoch() {
    const Scores scores = task_->evaluate(position_.epoch + 1);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - epoch_start_)
            .count();
    const double train_seconds = progress_->seconds();
    const double rate =
        train_seconds > 0 ? static_cast<double>(progress_->samples()) / train_seconds : 0;
    const double train_loss = progress_->mean_loss();
    task_->end_epoch(scores);
    position_ = {position_.epoch + 1, 0, position_.step, 0.0, 0, position_.skipped};
    save_checkpoint();  // before the metrics line: a crash between them loses no state
    out_ << "epoch " << position_.epoch << "/" << config_.epochs << "  train_loss "
         << std::fixed << std::setprecision(4) << train_loss;
    for (const auto& [name, value] : scores) out_ << "  " << name << " " << value;
    out_ << "  " << std::setprecision(0) << rate << " samples/s  "
         << format_duration(seconds);
    if (task_->balanced()) out_ << "  shares " << shares_text(task_->shares());
    out_ << "\n";
    if (metrics_.is_open()) {
      metrics_ << "{\"epoch\": " << position_.epoch
               << ", \"train_loss\": " << json_number(train_loss);
      for (const auto& [name, value] : scores) {
        metrics_ << ", \"" << name << "\": " << json_number(value);
      }
      metrics_ << ", \"samples_per_second\": " << json_number(rate)
               << ", \"seconds\": " << json_number(seconds)
               << ", \"steps\": " << position_.step
               << ", \"skipped_steps\": " << position_.skipped << ", \"devices\": \""
               << task_->device_list()
               << "\", \"shares\": " << json_numbers(task_->shares()) << "}\n"
               << std::flush;
    }
    return scores;
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
    io::Checkpoint checkpoint;
    task_->save(checkpoint);
    if (!all_finite(checkpoint.model)) {
      fail_nonfinite("the weights are no longer finite after step " +
                         std::to_string(position_.step) + ", so they were not saved",
                     "A lower --lr may help");
    }
    saved_ = true;
    saved_at_ = position_text();
    if (!leader_) return;  // the replicas are equal: process 0 writes
    record_position(position_, checkpoint);
    checkpoint.rng_states["default"] = default_generator().get_state();
    checkpoint.extra.merge(run_settings(config_));
    checkpoint.extra.merge(run_places(config_));
    checkpoint.extra["devices"] = task_->device_list();
    checkpoint.extra[kProcesses] = std::to_string(group_ ? group_->size() : 1);
    io::save_checkpoint(checkpoint, config_.checkpoint_path);
  }

  const TrainConfig& config_;
  std::shared_ptr<distributed::ProcessGroup> group_;  // null: one process
  bool leader_;                // prints, writes checkpoints and metrics
  std::ostringstream silent_;  // what the other processes would print
  std::ostream& out_;
  bool interrupted_anywhere_ = false;
  std::unique_ptr<TrainingTask> task_;
  Position position_;
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
          {"weight_decay", json_number(config.weight_decay)},
          {"lr_schedule", config.lr_schedule},
          {"epochs", std::to_string(config.epochs)},
          {"batch_size", std::to_string(config.batch_size)},
          {"augment", config.augment ? "1" : "0"},
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
  return {
      {"data", config.data_dir}, {"devices", devices}, {"samples", config.samples_dir}};
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
