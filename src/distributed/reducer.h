// Private: DistributedDataParallel's gradient reducer. It owns the buckets,
// hooks every managed parameter's gradient accumulation, launches each
// bucket's allreduce once all its gradients are in, and at the end of the
// backward pass waits for them and checks that no parameter was left out.
// See Note [DDP buckets] in reducer.cpp.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "distributed/host_allreduce.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/distributed_data_parallel.h"
#include "tandem/distributed/process_group.h"
#include "tandem/distributed/work.h"

namespace tandem::distributed::detail {

struct ReducerOptions {
  size_t first_bucket_bytes = 1 << 20;
  size_t bucket_bytes = 25 << 20;
  bool find_unused_parameters = false;
  bool gradient_as_bucket_view = true;
  bool overlap = true;
  /// Given: bucket by it from the start, and never reassign.
  std::vector<size_t> ready_order;
};

class Reducer {
 public:
  /// `params` are the managed parameters in registration order, `names`
  /// their names for messages.
  Reducer(std::vector<Tensor> params,
          std::vector<std::string> names,
          std::shared_ptr<ProcessGroup> group,
          ReducerOptions options);
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  /// Before a forward with grad mode on: fails if the previous synchronized
  /// forward's backward never finished; reassigns the buckets when due (a
  /// collective, so every rank must be here).
  void prepare_for_forward();
  /// After a forward whose backward is to be synchronized: arms the hooks.
  void prepare_for_backward();

  nn::DistributedDataParallelStats stats() const;
  /// Synchronized backward passes so far (stats() without the copies).
  int64_t synchronized_backwards() const;

  /// Buckets are reduced by `hook` from now on (gradients go in undivided).
  void register_comm_hook(nn::CommHook hook);

  // ---- Join (uneven inputs) ----
  /// Gradients go into the buckets divided by `divisor`, and a parameter is
  /// fully used when `expected_users` ranks used it (both the world size
  /// outside Join; the active ranks' count inside it).
  void set_divisors(int64_t divisor, int64_t expected_users);
  /// Multiplies this rank's gradients by `weight` before they are summed
  /// (1 by default): its share of the batch's rows times the world size,
  /// so that the average is the whole batch's gradient when the ranks'
  /// parts differ in size (shares, rank_balance.h).
  void set_grad_weight(double weight);
  /// With buckets in shared memory: this rank adds at most `rows` of
  /// `total` of each (total 0: as much as it can claim).
  void set_adding_part(int64_t rows, int64_t total);
  /// When the last synchronized backward's computing ended (its last
  /// gradient was ready); the epoch of the clock before the first.
  std::chrono::steady_clock::time_point backward_end() const;
  /// A joined rank's part of the active ranks' synchronized backward: every
  /// bucket reduced with zeros, in order, the usage check taken alike.
  void shadow_backward();

 private:
  struct Bucket {
    std::vector<size_t> params;  // indices into params_
    Tensor flat;                 // the gradients, then (last bucket) the usage flags
    size_t offset = 0;           // of flat in window_, when there is one
    std::vector<Tensor> views;   // per parameter, shaped like it
    size_t pending = 0;          // gradients still to come this pass
    Work work;
  };
  struct Slot {
    size_t bucket = 0;
    size_t position = 0;  // in the bucket's params and views
  };

  void install_buckets(const std::vector<std::vector<size_t>>& assignment);
  void rebuild_buckets();
  void reset_pass();
  // reset_pass(), counting the pass (and scheduling the rebuild after the
  // first).
  void end_pass();

  // The gradient of params_[index] was accumulated (autograd thread).
  void on_gradient(size_t index);
  // Puts params_[index]'s gradient (zeros when it has none) into its view.
  void mark_ready(size_t index);
  // 1 for each parameter whose gradient this rank has, else 0.
  void write_usage_flags(const Tensor& flags) const;
  // Reduces bucket `b` (built-in, or the hook); the last one's usage flags
  // too.
  void launch_bucket(size_t b);
  // The hook's result for bucket `b`, checked, into its buffer.
  void take_hook_result(size_t b);
  // Launches the buckets whose gradients are all in, strictly in order.
  void launch_ready_buckets();
  // The end of the synchronized backward pass (queued by the first hook).
  void finish_backward();
  // Reads the summed usage flags; throws UnusedParameterError when some
  // parameter got no gradient on some rank (and that is not allowed).
  void check_usage(const std::vector<int64_t>& users, bool shadowing);
  // Waits for every launched bucket; returns how many ranks used each
  // parameter (the summed usage flags).
  std::vector<int64_t> wait_for_buckets();
  Tensor& view_of(size_t index);

  std::vector<Tensor> params_;
  std::vector<std::string> names_;
  std::vector<size_t> hook_ids_;
  std::shared_ptr<ProcessGroup> group_;
  /// The buckets' memory when every rank is on this host and on the CPU;
  /// null otherwise (they are reduced by MPI or NCCL).
  std::shared_ptr<HostWindow> window_;
  ReducerOptions options_;
  int64_t divisor_;
  double grad_weight_ = 1.0;
  Part adding_part_;
  std::chrono::steady_clock::time_point backward_end_{};
  nn::CommHook hook_;
  Work usage_work_;  // with a hook: the usage flags' own allreduce
  int64_t expected_users_;

  mutable std::mutex mutex_;
  std::vector<Bucket> buckets_;
  std::vector<Slot> slots_;
  bool armed_ = false;
  bool finish_queued_ = false;
  size_t next_bucket_ = 0;
  std::vector<uint8_t> ready_;  // this pass
  // The parameter's hook ran since the last synchronized backward (inside
  // no_sync() windows too): its .grad holds gradients to reduce.
  std::vector<uint8_t> used_;
  // The first synchronized backward records the order, unless it was given.
  bool recording_ready_order() const {
    return synchronized_backwards_ == 0 && options_.ready_order.empty();
  }
  std::vector<size_t> ready_order_;  // of the first synchronized backward
  bool rebuild_due_ = false;
  bool rebuilt_ = false;
  int64_t synchronized_backwards_ = 0;
};

}  // namespace tandem::distributed::detail
