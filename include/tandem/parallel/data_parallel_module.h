// nn::DataParallel: a module that runs the module it wraps over several
// devices on every forward (PyTorch's torch.nn.DataParallel): the input is
// scattered along `dim` over device_ids, the module replicated (each
// DataParallel keeps its replicas between calls in a ReplicaCache of its
// own, see replicate.h), the replicas run on the devices' executor threads,
// and the outputs are gathered on output_device.
//
// - The wrapped module is the child "module": state_dict keys read
//   "module.<name>", and DataParallel nests inside other modules.
// - With several device ids the module must already be on device_ids[0]
//   (checked every call); with one id the constructor moves it there, and
//   forward runs the module itself and returns its output as it is.
// - Without device_ids every CUDA device is used; with neither device_ids
//   nor CUDA, forward simply calls the module (so the same code runs on a
//   machine without GPUs). Logical CPU devices are devices: device_ids
//   {cpu:0, cpu:1} runs two replicas at once.
// - output_device may be any device, "cpu" included (default device_ids[0]).
// - The batch is cut by the chunk rule (Balance::kEven), by fixed shares
//   (shares({3, 1})), or by shares that follow the devices' speed
//   (Balance::kAuto), re-planned between steps (cut_plan.h). A device whose
//   share rounds to no rows sits the step out. Whatever the cut, backward
//   leaves the whole batch's gradient: the loss is taken on the gathered
//   output.
// - invariant(true) makes the result independent of the devices and the
//   cut (Note [Invariant mode] in parallel/micro_batches.cpp).
//
//   namespace nn = tandem::nn;
//   nn::DataParallel dp(nn::Linear(5, 2),
//                       nn::DataParallelOptions().device_ids({"cpu:0", "cpu:1"}));
//   auto y = dp(x);                 // x: [30, 5] -> two replicas of 15 rows
//   y.sum().backward();             // gradients in dp->module()'s parameters
//   auto* fc = dp->module()->as<nn::Linear>();
//
//   nn::DataParallel uneven(model, nn::DataParallelOptions()
//                                      .device_ids({"cpu:0", "cpu:1"})
//                                      .balance(nn::Balance::kAuto));
//
//   // The same weights, bit for bit, on {cpu:0} or {cpu:0, ..., cpu:3}:
//   nn::DataParallel same(model, nn::DataParallelOptions()
//                                    .device_ids({"cpu:0", "cpu:1"})
//                                    .invariant(true));
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/parallel/cut_plan.h"
#include "tandem/parallel/data_parallel.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::nn {

class DataParallelOptions {
 public:
  /// The devices to run on (default: every CUDA device).
  DataParallelOptions& device_ids(std::vector<Device> value) {
    device_ids_ = std::move(value);
    return *this;
  }
  /// Where outputs are gathered (default: device_ids[0]).
  DataParallelOptions& output_device(Device value) {
    output_device_ = value;
    return *this;
  }
  /// The dimension inputs are split along and outputs joined along.
  DataParallelOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  /// Cuts every batch in proportion to these weights, one per device:
  /// shares({3, 1}) gives device_ids[0] three quarters of the rows. Under
  /// Balance::kAuto, where the shares start.
  DataParallelOptions& shares(std::vector<double> weights) {
    shares_ = std::move(weights);
    return *this;
  }
  /// kEven (the default): the chunk rule, or the fixed shares() if given.
  /// kAuto: shares that follow each device's measured speed (cut_plan.h).
  DataParallelOptions& balance(Balance value) {
    balance_ = value;
    return *this;
  }
  /// Invariant mode: the weights a training run reaches are bitwise the
  /// same for every device list, share and balance, at the same batch,
  /// seed and dtype. Each batch is cut into micro-batches of micro_batch()
  /// rows, the cut handing whole micro-batches to the devices; gradients
  /// are summed in one fixed tree over the micro-batch index; dropout masks
  /// are keyed by sample. A module that normalises over the batch
  /// (BatchNorm while training) is refused. See Note [Invariant mode] in
  /// parallel/micro_batches.cpp.
  DataParallelOptions& invariant(bool value) {
    invariant_ = value;
    return *this;
  }
  /// Rows per micro-batch in invariant mode (default 32; the last one of a
  /// batch may be shorter). The bits depend on it: keep it fixed across
  /// the runs you compare.
  DataParallelOptions& micro_batch(int64_t rows) {
    micro_batch_ = rows;
    return *this;
  }

  const std::optional<std::vector<Device>>& device_ids() const noexcept {
    return device_ids_;
  }
  const std::optional<Device>& output_device() const noexcept { return output_device_; }
  int64_t dim() const noexcept { return dim_; }
  const std::optional<std::vector<double>>& shares() const noexcept { return shares_; }
  Balance balance() const noexcept { return balance_; }
  bool invariant() const noexcept { return invariant_; }
  int64_t micro_batch() const noexcept { return micro_batch_; }

 private:
  std::optional<std::vector<Device>> device_ids_;
  std::optional<Device> output_device_;
  int64_t dim_ = 0;
  std::optional<std::vector<double>> shares_;
  Balance balance_ = Balance::kEven;
  bool invariant_ = false;
  int64_t micro_batch_ = 32;
};

class DataParallelImpl : public Module {
 public:
  /// Wraps `module` (a holder such as Linear, or a shared_ptr to a module)
  /// whose forward takes a Tensor or a TensorTree.
  template <typename ModuleType>
  requires parallel::detail::replicable_module<
      parallel::detail::module_type_of_t<ModuleType>>
  explicit DataParallelImpl(const ModuleType& module, DataParallelOptions options = {})
      : DataParallelImpl(parallel::detail::module_pointer(module),
                         parallel::detail::forward_of<
                             parallel::detail::module_type_of_t<ModuleType>>(),
                         options) {}

  /// One tensor in, one tensor out (the module must return one tensor).
  Tensor forward(const Tensor& input);
  /// A tensor or nested list in; the module's output, gathered, out.
  parallel::TensorTree forward(const parallel::TensorTree& input);

  /// The wrapped module (the original, never a replica).
  const std::shared_ptr<Module>& module() const noexcept { return module_; }
  /// Empty when forward calls the module directly (no CUDA, no device_ids).
  const std::vector<Device>& device_ids() const noexcept { return device_ids_; }
  /// Unset when device_ids() is empty.
  const std::optional<Device>& output_device() const noexcept { return output_device_; }
  int64_t dim() const noexcept { return dim_; }
  /// Rows per micro-batch when in invariant mode, else nullopt.
  std::optional<int64_t> micro_batch() const noexcept { return micro_batch_; }
  /// How each batch is cut over device_ids(), as fractions that sum to 1
  /// (under kAuto, as the measured speeds have moved them so far).
  std::vector<double> shares() const;
  /// Drops the replicas, so the next forward clones the module afresh (a
  /// change the cache cannot see: replicate.h).
  void clear_replicas() { replicas_.clear(); }

 private:
  DataParallelImpl(std::shared_ptr<Module> module,
                   parallel::detail::Forward forward,
                   const DataParallelOptions& options);
  void check_placement() const;

  std::shared_ptr<Module> module_;
  parallel::detail::Forward forward_;
  std::vector<Device> device_ids_;
  std::optional<Device> output_device_;
  int64_t dim_ = 0;
  // Set when device_ids() has several, or in invariant mode (then counting
  // micro-batches, not rows).
  std::optional<parallel::CutPlan> cut_plan_;
  std::optional<int64_t> micro_batch_;  // set in invariant mode
  parallel::ReplicaCache replicas_;
};

TANDEM_MODULE(DataParallel);

}  // namespace tandem::nn
