#include "classification_task.h"

#include <cmath>
#include <optional>
#include <sstream>
#include <utility>

#include "augment.h"
#include "commands.h"
#include "evaluation.h"
#include "grad_ready_order.h"
#include "image_data.h"
#include "model_on_devices.h"
#include "models.h"
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

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& config,
                                                 const std::vector<Tensor>& params) {
  if (config.optimizer == "sgd") {
    return std::make_unique<optim::SGD>(
        params,
        optim::SGDOptions(config.lr).momentum(0.9).weight_decay(config.weight_decay));
  }
  if (config.optimizer == "adam") {
    return std::make_unique<optim::Adam>(
        params, optim::AdamOptions(config.lr).weight_decay(config.weight_decay));
  }
  throw UsageError("unknown optimizer '" + config.optimizer + "' (expected sgd|adam)");
}

class ClassificationTask final : public TrainingTask {
 public:
  using Loader = data::DataLoader<data::TensorDataset, data::samplers::RandomSampler>;

  ClassificationTask(const TrainConfig& config,
                     const io::Checkpoint* resume,
                     std::shared_ptr<distributed::ProcessGroup> group)
      : config_(config), group_(std::move(group)) {
    check_devices(config.devices, group_ != nullptr);
    train_ = load_split(config.data_dir, /*train=*/true);
    test_ = load_split(config.data_dir, /*train=*/false);
    data::DataLoaderOptions loading;
    loading.batch_size(config.batch_size)
        .workers(config.workers)
        // Workers pin the batches; step() copies them non_blocking.
        .pin_memory(config.devices.front().is_cuda())
        .shard(group_ ? group_->rank() : 0, group_ ? group_->size() : 1);
    // Under mpirun with shares or in invariant mode, each process reads the
    // rows the plan gives it (the same plan on every process:
    // DistributedDataParallel::cut, whole micro-batches in invariant mode).
    if (group_ && (!config.balancing.even() || config.balancing.micro_batch > 0)) {
      loading.shard_cut([this](int64_t rows) { return model_->cut(rows); });
    }
    loader_.emplace(data::TensorDataset(train_.images, train_.targets),
                    data::samplers::RandomSampler(train_.images.size(0), config.seed),
                    loading);
    if (resume) ready_order_ = recorded_grad_ready_order(*resume, config.resume_path);
    if (group_ && config.balancing.micro_batch > 0) check_micro_batches_per_process();
  }

  void make_models() override {
    manual_seed(config_.seed);
    nn::Sequential model = make_model(config_.model);
    model->to(config_.dtype);
    model_.emplace(model,
                   config_.devices,
                   group_,
                   nn::DistributedDataParallelOptions().grad_ready_order(ready_order_),
                   config_.balancing);
    optimizer_ = make_optimizer(config_, model_->model()->parameters());
  }

  std::string description() const override {
    std::ostringstream out;
    const int64_t devices = static_cast<int64_t>(config_.devices.size());
    out << config_.model
        << (config_.dtype == kFloat32 ? ""
                                      : " in " + std::string(dtype_name(config_.dtype)))
        << " on " << model_->device_list()
        << (group_ ? " in each of " + std::to_string(group_->size()) + " processes" : "")
        << ": " << train_.size() << " training and " << test_.size()
        << " test images from " << config_.data_dir << "; batch " << config_.batch_size;
    if (config_.balancing.micro_batch > 0) {
      out << " (invariant: micro-batches of " << config_.balancing.micro_batch << ")";
    } else if (devices > 1) {
      out << " (" << (config_.batch_size + devices - 1) / devices << " per device)";
    }
    if (group_ && config_.balancing.micro_batch == 0) {
      out << " (" << config_.batch_size / group_->size()
          << (config_.batch_size % group_->size() ? "+" : "") << " per process)";
    }
    if (config_.augment) out << ", flipped and shifted at random";
    out << ", " << optimizer_description(config_);
    return out.str();
  }

  int64_t batches_per_epoch() const override { return loader_->num_batches(); }

  void begin_epoch(int64_t epoch, int64_t first_batch) override {
    for (auto& group : optimizer_->param_groups()) {
      group.options().set_lr(epoch_lr(config_, epoch));
    }
    epoch_.emplace(loader_->epoch(epoch, first_batch));
    next_ = epoch_->begin();
    epoch_index_ = epoch;
  }

  // One step on this process's part of the batch: the mean loss over the
  // whole (global) batch; the weights change only when it is finite.
  StepOutcome step(const InterruptScope& interrupt) override {
    const data::Batch& batch = *next_;
    StepOutcome outcome;
    outcome.batch = batch.index;
    outcome.samples = batch.global_size;
    optimizer_->zero_grad();
    const Tensor target = batch.target.to(model_->output_device(), /*non_blocking=*/true);
    const int64_t rows = batch.target.size(0);
    const Tensor logits = model_->forward(
        config_.augment ? augment(batch.data,
                                  {config_.seed, epoch_index_, batch.index},
                                  first_row(batch.global_size),
                                  normalized_black())
                        : batch.data);
    if (!group_) {
      const Tensor loss = cross_entropy(logits, target);
      loss.backward();
      outcome.loss = loss.item<double>();
    } else if (config_.balancing.micro_batch > 0) {
      // Invariant mode: this process's rows' part of the whole batch's mean
      // loss, which gives each row the gradient that mean gives it in one
      // process (DistributedDataParallelOptions::invariant).
      const Tensor loss = cross_entropy(logits, target, Tensor(), kSum) *
                          (1.0 / static_cast<double>(batch.global_size));
      loss.backward();
      outcome.loss = all_processes_sum(loss.item<double>(), interrupt, outcome);
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
      outcome.loss =
          all_processes_sum(
              loss.item<double>() * static_cast<double>(rows), interrupt, outcome) /
          static_cast<double>(batch.global_size);
    }
    if (std::isfinite(outcome.loss)) optimizer_->step();
    ++next_;
    return outcome;
  }

  Scores evaluate(int64_t /*epochs_done*/) override {
    const Evaluation test = cli::evaluate(*model_, test_, kEvalBatchSize);
    return {{"test_loss", test.loss}, {"test_accuracy", test.accuracy}};
  }

  // The accuracy is the headline: "test accuracy 0.90, test loss 0.29".
  Scores final_scores(int64_t epochs_done, const Scores* last) override {
    Scores scores = last ? *last : evaluate(epochs_done);
    std::swap(scores[0], scores[1]);
    return scores;
  }

  void save(io::Checkpoint& checkpoint) override {
    checkpoint.model = model_->model()->state_dict();
    checkpoint.optimizer = optimizer_->state_dict();
    record_grad_ready_order(model_->grad_ready_order(), checkpoint);
  }

  void restore(const io::Checkpoint& checkpoint) override {
    model_->model()->load_state_dict(checkpoint.model);
    optimizer_->load_state_dict(checkpoint.optimizer);
  }

  std::string device_list() const override { return model_->device_list(); }
  std::vector<double> shares() const override { return model_->shares(); }
  bool balanced() const override { return model_->balanced(); }

 private:
  // `value` summed over the processes, in the same allreduce that tells
  // every process whether one of them was signalled (outcome.stop_anywhere).
  double all_processes_sum(double value,
                           const InterruptScope& interrupt,
                           StepOutcome& outcome) const {
    Tensor sums = empty({2}, kFloat64);
    sums.data_ptr<double>()[0] = value;
    sums.data_ptr<double>()[1] = interrupt.requested() ? 1.0 : 0.0;
    group_->allreduce(sums).wait();
    outcome.stop_anywhere = sums.data_ptr<double>()[1] > 0;
    return sums.data_ptr<double>()[0];
  }

  // Invariant mode under mpirun: every batch, the epoch's last too, must
  // have a micro-batch for each process.
  void check_micro_batches_per_process() const {
    const int64_t images = train_.images.size(0);
    const int64_t last = images % config_.batch_size;
    const int64_t smallest = last == 0 ? config_.batch_size : last;
    const int64_t micro_batch = config_.balancing.micro_batch;
    const int64_t count = (smallest + micro_batch - 1) / micro_batch;
    if (count >= group_->size()) return;
    throw UsageError(
        "train: --invariant under mpirun gives each process whole "
        "micro-batches, but a batch of " +
        std::to_string(smallest) + " images (" +
        (smallest == config_.batch_size ? "--batch-size" : "the epoch's last batch") +
        ") has " + std::to_string(count) + " micro-batches of " +
        std::to_string(micro_batch) + " for " + std::to_string(group_->size()) +
        " processes; use a smaller --micro-batch or fewer processes");
  }

  // The global row of this process's first image in a batch of `rows`.
  int64_t first_row(int64_t rows) const {
    if (!group_) return 0;
    const std::vector<int64_t> parts = model_->cut(rows);
    int64_t before = 0;
    for (int r = 0; r < group_->rank(); ++r) before += parts[static_cast<size_t>(r)];
    return before;
  }

  const TrainConfig& config_;
  std::shared_ptr<distributed::ProcessGroup> group_;  // null: one process
  std::vector<size_t> ready_order_;                   // the checkpoint's, for the DDP
  std::optional<ModelOnDevices> model_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  ImageSplit train_, test_;
  // After the model, so destroyed before it: the loader's workers ask the
  // model for the cut (shard_cut).
  std::optional<Loader> loader_;
  std::optional<Loader::EpochRange> epoch_;
  Loader::Iterator next_;  // the epoch's next batch
  int64_t epoch_index_ = 0;
};

}  // namespace

std::unique_ptr<TrainingTask> make_classification_task(
    const TrainConfig& config,
    const io::Checkpoint* resume,
    std::shared_ptr<distributed::ProcessGroup> group) {
  return std::make_unique<ClassificationTask>(config, resume, std::move(group));
}

}  // namespace tandem::cli
