// What one `tandem train --model` choice trains, as the run around it
// (trainer.cpp) sees it: its models, optimizers and data, one training
// step, the scores after an epoch and its part of a checkpoint. The run
// keeps everything the choices share: the position, the progress display,
// the metrics file, checkpoints and exact resume, --max-steps, non-finite
// losses and the stop on a signal.
//
//   classifier  mlp, cnn, resnet on Fashion-MNIST (classification_task.h),
//               also under mpirun, with shares and in invariant mode
//   lstm-lm     a word-level LSTM language model (language_model_task.h)
//   dcgan       a DCGAN on Fashion-MNIST (gan_task.h)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "interrupt.h"
#include "tandem/distributed/process_group.h"
#include "tandem/io/checkpoint.h"
#include "trainer.h"

namespace tandem::cli {

struct StepOutcome {
  int64_t batch = 0;  // the batch's index in its epoch, from 0
  /// Mean loss over the global batch; the update was skipped when it is
  /// not finite.
  double loss = 0;
  int64_t samples = 0;  // in the global batch (images, or tokens)
  /// In a distributed run: a process was signalled (every process learns
  /// it in the same step).
  bool stop_anywhere = false;
};

/// Named scores, in the order they are printed and written: {"test_loss",
/// 0.31}, {"test_accuracy", 0.89}.
using Scores = std::vector<std::pair<std::string, double>>;

/// How the run updates its weights, for description(): "adam lr 0.001
/// (cosine)", with ", weight decay 0.0005" when there is one.
std::string optimizer_description(const TrainConfig& config);

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;

  /// Builds the models and optimizers from config.seed. Apart from the
  /// constructor, which reads the data and may fail: every process of a
  /// distributed run agrees the data are there before any of them builds a
  /// model, which talks to the others (DistributedDataParallel).
  virtual void make_models() = 0;

  /// What trains on what ("resnet on cpu:0,cpu:1: 60000 training and
  /// 10000 test images from DIR; batch 256 (128 per device), adam lr 0.001
  /// (cosine)"), for the run's first line.
  virtual std::string description() const = 0;
  /// Steps in an epoch.
  virtual int64_t batches_per_epoch() const = 0;
  /// Starts epoch `epoch` (from 0) at batch `first_batch` (0, or where a
  /// resumed run stopped).
  virtual void begin_epoch(int64_t epoch, int64_t first_batch) = 0;
  /// Trains the epoch's next batch.
  virtual StepOutcome step(const InterruptScope& interrupt) = 0;
  /// Scores of the weights as they are, after `epochs_done` epochs (the
  /// model stays in training mode).
  virtual Scores evaluate(int64_t epochs_done) = 0;
  /// After an epoch's scores: a schedule that follows them moves on.
  virtual void end_epoch(const Scores& scores) { (void)scores; }
  /// The scores the run ends with, headline first: by default the last
  /// epoch's (`last`), or an evaluation when the run trained no epoch.
  virtual Scores final_scores(int64_t epochs_done, const Scores* last) {
    return last ? *last : evaluate(epochs_done);
  }
  /// Weights (checkpoint.model: the run refuses to write non-finite ones),
  /// optimizer state and the task's own extras.
  virtual void save(io::Checkpoint& checkpoint) = 0;
  virtual void restore(const io::Checkpoint& checkpoint) = 0;
  /// "cpu:0,cpu:1"
  virtual std::string device_list() const = 0;
  /// How a batch is cut over the devices (or the processes), as fractions.
  virtual std::vector<double> shares() const = 0;
  /// Whether that cut is other than the chunk rule's (--balance).
  virtual bool balanced() const { return false; }
};

/// The --model choices of `tandem train`: the classifiers of models.h,
/// "lstm-lm" and "dcgan".
const std::vector<std::string>& train_model_names();

/// The task of config.model; resuming from `resume` when given (its
/// settings already checked against config). Checks the devices and reads
/// the data; make_models() then builds the models.
std::unique_ptr<TrainingTask> make_training_task(
    const TrainConfig& config,
    const io::Checkpoint* resume,
    std::shared_ptr<distributed::ProcessGroup> group);

}  // namespace tandem::cli
