#include "trainer.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
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
#include "tandem/data/loader.h"
#include "tandem/data/tensor_dataset.h"
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

// Where the run stands: the next batch to train is `batch` of `epoch`.
struct Position {
  int64_t epoch = 0;
  int64_t batch = 0;
  int64_t step = 0;  // optimizer steps taken in all
};

class Run {
 public:
  Run(const TrainConfig& config, std::optional<io::Checkpoint> resume, std::ostream& out)
      : config_(config), out_(out) {
    manual_seed(config.seed);
    model_ = std::make_unique<ModelOnDevices>(make_model(config.model), config.devices);
    optimizer_ =
        make_optimizer(config.optimizer, model_->model()->parameters(), config.lr);
    train_ = load_split(config.data_dir, /*train=*/true);
    test_ = load_split(config.data_dir, /*train=*/false);
    loader_ =
        std::make_unique<data::Loader>(data::TensorDataset(train_.images, train_.targets),
                                       data::LoaderOptions()
                                           .batch_size(config.batch_size)
                                           .shuffle(true)
                                           .seed(config.seed)
                                           .workers(config.workers));
    if (resume) restore(*resume);
  }

  int run() {
    describe();
    InterruptScope interrupt;
    std::ofstream metrics = open_metrics();
    const auto start = std::chrono::steady_clock::now();
    std::optional<Evaluation> last;
    while (position_.epoch < config_.epochs) {
      const bool epoch_done = train_epoch(interrupt);
      if (!epoch_done) return stop(interrupt);
      last = finish_epoch(metrics);
    }
    if (!last) last = evaluate(*model_, test_, kEvalBatchSize);  // nothing left to train
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out_ << "done: " << plural(config_.epochs, "epoch") << " ("
         << plural(position_.step, "step") << ") in " << format_duration(seconds)
         << "; test accuracy " << std::setprecision(4) << std::fixed << last->accuracy
         << ", test loss " << last->loss << "\n";
    if (!config_.checkpoint_path.empty()) {
      out_ << "checkpoint: " << config_.checkpoint_path << "\n";
    }
    return 0;
  }

 private:
  void describe() {
    const int64_t per_device =
        (config_.batch_size + static_cast<int64_t>(config_.devices.size()) - 1) /
        static_cast<int64_t>(config_.devices.size());
    out_ << "training " << config_.model << " on " << model_->device_list() << ": "
         << train_.size() << " training and " << test_.size() << " test images from "
         << config_.data_dir << "; batch " << config_.batch_size;
    if (config_.devices.size() > 1) out_ << " (" << per_device << " per device)";
    out_ << ", " << config_.optimizer << " lr " << config_.lr << ", "
         << plural(config_.epochs, "epoch") << "\n";
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
    position_ = {checkpoint.epoch, checkpoint.batch_in_epoch, checkpoint.step};
    TANDEM_CHECK(position_.batch <= loader_->num_batches(),
                 "resume: the checkpoint stopped at batch ",
                 position_.batch,
                 " of an epoch, but an epoch has ",
                 loader_->num_batches(),
                 " batches of this data");
  }

  std::ofstream open_metrics() {
    std::ofstream metrics;
    if (config_.metrics_path.empty()) return metrics;
    const bool resumed = position_.epoch > 0 || position_.batch > 0;
    metrics.open(config_.metrics_path, resumed ? std::ios::app : std::ios::trunc);
    TANDEM_CHECK(metrics.good(), "cannot write the metrics file ", config_.metrics_path);
    return metrics;
  }

  // Trains the rest of the current epoch; false when stopped early (a
  // signal or --max-steps).
  bool train_epoch(const InterruptScope& interrupt) {
    progress_.emplace(out_,
                      is_terminal(out_),
                      position_.epoch + 1,
                      config_.epochs,
                      loader_->num_batches(),
                      position_.batch);
    epoch_start_ = std::chrono::steady_clock::now();
    for (const data::Batch& batch : loader_->epoch(position_.epoch, position_.batch)) {
      optimizer_->zero_grad();
      const Tensor target = batch.target.to(model_->output_device());
      const Tensor loss = cross_entropy(model_->forward(batch.data), target);
      loss.backward();
      optimizer_->step();
      ++position_.step;
      position_.batch = batch.index + 1;
      progress_->step(loss.item<double>(), batch.target.size(0));
      if (interrupt.requested() ||
          (config_.max_steps > 0 && position_.step >= config_.max_steps)) {
        progress_->finish();
        return false;
      }
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
    ++position_.epoch;
    position_.batch = 0;
    out_ << "epoch " << position_.epoch << "/" << config_.epochs << "  train_loss "
         << std::fixed << std::setprecision(4) << progress_->mean_loss() << "  test_loss "
         << test.loss << "  test_accuracy " << test.accuracy << "  "
         << std::setprecision(0) << rate << " samples/s  " << format_duration(seconds)
         << "\n";
    if (metrics.is_open()) {
      metrics << "{\"epoch\": " << position_.epoch
              << ", \"train_loss\": " << json_number(progress_->mean_loss())
              << ", \"test_loss\": " << json_number(test.loss)
              << ", \"test_accuracy\": " << json_number(test.accuracy)
              << ", \"samples_per_second\": " << json_number(rate)
              << ", \"seconds\": " << json_number(seconds)
              << ", \"steps\": " << position_.step << ", \"devices\": \""
              << model_->device_list() << "\"}\n"
              << std::flush;
    }
    save_checkpoint();
    return test;
  }

  int stop(const InterruptScope& interrupt) {
    std::string why = interrupt.requested()
                          ? std::string("stopped by ") + interrupt.signal_name()
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
    return interrupt.requested() ? interrupt.exit_code() : 0;
  }

  void save_checkpoint() {
    if (config_.checkpoint_path.empty()) return;
    io::Checkpoint checkpoint;
    checkpoint.model = model_->model()->state_dict();
    checkpoint.optimizer = optimizer_->state_dict();
    checkpoint.epoch = position_.epoch;
    checkpoint.batch_in_epoch = position_.batch;
    checkpoint.step = position_.step;
    checkpoint.rng_states["default"] = default_generator().get_state();
    checkpoint.extra = run_settings(config_);
    io::save_checkpoint(checkpoint, config_.checkpoint_path);
  }

  const TrainConfig& config_;
  std::ostream& out_;
  std::unique_ptr<ModelOnDevices> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  ImageSplit train_, test_;
  std::unique_ptr<data::Loader> loader_;
  Position position_;
  std::optional<EpochProgress> progress_;
  std::chrono::steady_clock::time_point epoch_start_;
};

}  // namespace

std::map<std::string, std::string> run_settings(const TrainConfig& config) {
  std::ostringstream lr;
  lr << std::setprecision(17) << config.lr;
  return {{"model", config.model},
          {"optimizer", config.optimizer},
          {"lr", lr.str()},
          {"batch_size", std::to_string(config.batch_size)},
          {"seed", std::to_string(config.seed)}};
}

int train(const TrainConfig& config,
          std::optional<io::Checkpoint> resume,
          std::ostream& out) {
  Run run(config, std::move(resume), out);
  return run.run();
}

}  // namespace tandem::cli
