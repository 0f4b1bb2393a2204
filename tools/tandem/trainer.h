// The training run behind `tandem train`: a model (a classifier of
// models.h, the lstm-lm language model or the dcgan; training_task.h)
// trained over one or more devices and scored after every epoch, with a
// progress display, per-epoch metrics (JSON Lines), checkpoints, exact
// resume and a clean stop on Ctrl-C.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "balance_flag.h"
#include "tandem/core/device.h"
#include "tandem/core/dtype.h"
#include "tandem/distributed/process_group.h"
#include "tandem/io/checkpoint.h"

namespace tandem::cli {

struct TrainConfig {
  std::string data_dir;  // lstm-lm: a file of verses, or "" for the bible command
  std::string model = "mlp";
  ScalarType dtype = kFloat32;  // of the weights and the computation
  std::vector<Device> devices;
  Balancing balancing;  // how DataParallel cuts each batch over the devices
  int64_t epochs = 10;
  int64_t batch_size = 256;  // the global batch, split across the devices
  bool augment = false;      // classifiers: random flips and shifts (augment.h)
  std::string optimizer = "sgd";
  double lr = 0.05;
  // An L2 penalty on every parameter, as PyTorch's optimizers take it.
  double weight_decay = 0;
  std::string lr_schedule =
      "cosine";  // or "constant"; set per epoch; lstm-lm: or "plateau"
  uint64_t seed = 0;
  int64_t workers = 0;
  std::string on_nonfinite = "stop";  // or "skip": a step whose loss is not finite
  int64_t max_steps = 0;              // stop after this many steps in all; 0: no limit
  std::string checkpoint_path;        // written after every epoch and on a stop
  std::string metrics_path;           // JSON Lines, one object per epoch
  std::string samples_dir;            // dcgan: each epoch's PNG grid goes here ("": .)
  int64_t metrics_every = 0;          // and one every this many steps (0: none)
  std::string resume_path;            // the checkpoint this run continues, or ""
  /// Called before each step with its number (from 1, over the whole run).
  std::function<void(int64_t)> before_step;
};

/// The settings a checkpoint records, keyed by their flag's name with `_`
/// for `-` (model, dtype, optimizer, lr, weight_decay, lr_schedule, epochs,
/// batch_size, augment, seed, on_nonfinite, micro_batch): everything the run's numbers
/// depend on besides the data and the devices. A resumed run takes them from its
/// checkpoint.
std::map<std::string, std::string> run_settings(const TrainConfig& config);

/// What a checkpoint records of where the run read and ran ("data", the
/// --data folder; "devices", the --devices list; "samples", dcgan's
/// --samples folder): a resumed run takes them unless told otherwise,
/// since another place is not another run.
std::map<std::string, std::string> run_places(const TrainConfig& config);

/// The learning rate of `epoch` (from 0): config.lr throughout, or cosine
/// annealing from it towards 0 over config.epochs, one value per epoch (so
/// a resumed run recomputes it from the epoch alone).
double epoch_lr(const TrainConfig& config, int64_t epoch);

/// Trains from scratch, or from `resume` (whose settings must equal
/// run_settings(config)); returns the process exit code (0, or 128 + the
/// signal when stopped by SIGINT or SIGTERM). Reports on `out`. Checks that
/// the checkpoint and metrics files can be written before it trains.
///
/// A step whose loss is not finite (NaN, inf) updates nothing; with
/// on_nonfinite "stop" the run then fails (tandem::Error naming the epoch
/// and step), keeping the last checkpoint it wrote, and with "skip" it
/// goes on and counts the skipped steps. Non-finite weights are never
/// written over a checkpoint: the run fails instead.
///
/// With a process group (a run under mpirun), trains with
/// DistributedDataParallel: each process on one device, taking its part of
/// every batch (config.batch_size is the global batch), so the run computes
/// what one process would on the whole batches. Process 0 alone reports
/// and writes the checkpoint and metrics; every process resumes from the
/// checkpoint; a signal to any process stops them all after the same step.
/// Every process judges a step's loss alike: the whole batch's, reduced
/// across the processes before the update (a NaN in one part makes the
/// sum NaN). A failure every process meets is reported by process 0 alone;
/// the others throw QuietExit (commands.h).
int train(const TrainConfig& config,
          std::optional<io::Checkpoint> resume,
          std::ostream& out,
          std::shared_ptr<distributed::ProcessGroup> group = nullptr);

}  // namespace tandem::cli
