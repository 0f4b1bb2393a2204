// Per-step metrics (`tandem train --metrics-every N`): every N steps one
// JSON object on the metrics file, beside the per-epoch ones, with the
// mean loss and the samples per second of those N steps, how busy each
// device was (its own work time over the wall time, device_work_time.h;
// DataParallel's devices only: one device, or one per process, computes on
// the training thread) and the current shares of the batch.
//
//   {"epoch": 1, "step": 20, "train_loss": 0.61, "samples_per_second": 7400,
//    "busy": [0.93, 0.88], "shares": [0.52, 0.48]}
//
// `tandem plot` draws such records against the step.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "tandem/core/device.h"

namespace tandem::cli {

class StepMetrics {
 public:
  /// Every `every` steps (0: never) over `devices`.
  StepMetrics(int64_t every, std::vector<Device> devices);

  /// One step done: its mean loss over `samples` samples (a skipped step:
  /// samples 0). Returns the record to write after step `step` (counted
  /// from 1 over the run) of epoch `epoch` (from 1), or "" when none is due.
  std::string step(int64_t epoch,
                   int64_t step,
                   double loss,
                   int64_t samples,
                   const std::vector<double>& shares);

 private:
  void restart();

  int64_t every_;
  std::vector<Device> devices_;
  double loss_sum_ = 0;
  int64_t samples_ = 0;
  std::chrono::steady_clock::time_point start_;
  std::vector<double> work_at_start_;
};

/// The shortest text that reads back as `value` (JSON has no NaN: null).
std::string json_number(double value);
/// "[0.75, 0.25]"
std::string json_numbers(const std::vector<double>& values);

}  // namespace tandem::cli
