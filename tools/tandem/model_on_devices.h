// A model and the devices it runs on, as `tandem train` and `tandem eval`
// use it: on one device the model itself; on several, or in invariant mode,
// a DataParallel over them (the batch split across the devices, outputs
// gathered on the first);
// in a process of a distributed run (a process group given), one device
// and a DistributedDataParallel around the model for training forwards
// (forwards without autograd, evaluation, call the model directly and
// communicate nothing).
#pragma once

#include <string>
#include <vector>

#include <memory>

#include "balance_flag.h"
#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/distributed_data_parallel.h"
#include "tandem/nn/modules/sequential.h"
#include "tandem/parallel/data_parallel_module.h"

namespace tandem::cli {

/// What `--devices ""` means: every CUDA device, else the CPU as one device.
std::vector<Device> default_devices();

/// The devices of a --devices list (options.h), else default_devices().
std::vector<Device> devices_or_default(const std::string& list);

/// "cpu:0,cpu:1"
std::string device_list(const std::vector<Device>& devices);

/// A UsageError for an empty list, mixed device types, a device listed
/// twice or a GPU this machine lacks, and for several devices in a
/// distributed run (one device per process).
void check_devices(const std::vector<Device>& devices, bool distributed);

class ModelOnDevices {
 public:
  /// Moves `model` to devices[0], after check_devices().
  /// In a distributed run (`group` given) `ddp_options` configure the
  /// DistributedDataParallel (their process group is `group`). On several
  /// devices, `balancing` says how DataParallel cuts each batch.
  ModelOnDevices(nn::Sequential model,
                 std::vector<Device> devices,
                 std::shared_ptr<distributed::ProcessGroup> group = nullptr,
                 nn::DistributedDataParallelOptions ddp_options = {},
                 const Balancing& balancing = {});

  /// Logits for a batch anywhere (it is moved or split as needed); they
  /// lie on output_device().
  Tensor forward(const Tensor& batch);
  Device output_device() const { return devices_.front(); }
  const std::vector<Device>& devices() const { return devices_; }
  /// The model itself (not the DataParallel around it): its state_dict
  /// keys are the model's own.
  nn::Sequential& model() { return model_; }
  /// "cpu:0,cpu:1"
  std::string device_list() const;
  /// How each batch is cut over devices(), or in a distributed run over
  /// the processes, as fractions (one device, one process: {1}).
  std::vector<double> shares() const;
  /// Every process's rows of a global batch of `rows` (one process: {rows}).
  std::vector<int64_t> cut(int64_t rows) const;
  /// Whether the cut is other than the chunk rule's (shares or auto).
  bool balanced() const { return !balancing_.even(); }
  /// The distributed run's group, or null.
  const std::shared_ptr<distributed::ProcessGroup>& group() const { return group_; }
  /// The order the gradients became ready in the first synchronized
  /// backward of a distributed run (empty before it, and in one process).
  std::vector<size_t> grad_ready_order() const;

 private:
  nn::Sequential model_;
  std::vector<Device> devices_;
  ScalarType dtype_;  // of the model's parameters; inputs are converted to it
  Balancing balancing_;
  nn::DataParallel parallel_{nullptr};
  std::shared_ptr<distributed::ProcessGroup> group_;
  nn::DistributedDataParallel distributed_{nullptr};
};

}  // namespace tandem::cli
