// nn::DistributedDataParallel: data parallelism across processes, as
// PyTorch's torch.nn.parallel.DistributedDataParallel ("DDP"). Every process
// (rank) holds a whole replica of the model and trains it on its own part of
// each global batch; during backward the gradients are averaged across the
// ranks in buckets, each bucket's allreduce starting as soon as its
// gradients are ready, while backward goes on. When backward() returns,
// every rank's .grad holds the same average, so the same optimizer step
// keeps the replicas equal.
//
//   namespace dist = tandem::distributed;
//   auto pg = dist::init_process_group();            // mpirun -np 4 ./train
//   tandem::manual_seed(pg->rank());                 // any init: rank 0's wins
//   nn::DistributedDataParallel ddp(make_model());   // broadcasts rank 0's state
//   optim::SGD opt(ddp->parameters(), optim::SGDOptions(0.1));
//   for (auto& batch : loader->epoch(epoch)) {       // this rank's share
//     opt.zero_grad();
//     cross_entropy(ddp(batch.data), batch.target).backward();  // averaged
//     opt.step();
//   }
//
// Construction is a collective: every rank constructs it, in the same
// order. It checks first that every rank wraps the same model (parameter
// count, names, shapes, strides, dtypes and device type; buffers too):
// a difference is an error on *every* rank naming the first differing rank
// and parameter, never a hang. Then it broadcasts rank 0's parameters (and
// buffers, unless broadcast_buffers(false)) to the others.
//
// Buckets (Note [DDP buckets] in src/distributed/reducer.cpp): gradients go
// into flat buckets of at most bucket_cap_mb (25 MiB), the first one small
// (1 MiB), assigned in reverse registration order from the start (PyTorch
// waits for iteration 2), and reassigned once, after the first synchronized
// backward, in the order gradients became ready there. Buckets are reduced
// strictly in order, so every rank issues the same collectives. By default
// each .grad becomes a view into its bucket (gradient_as_bucket_view): no
// copy in or out, and no memory beyond the buckets; zero_grad(false) keeps
// the views, zero_grad() (set_to_none) makes the next backward copy in once.
//
// Averaging: each rank scales its gradients by 1 / world size while they go
// into the bucket (one pass: copy and scale), then the buckets are summed
// (PyTorch's order).
//
// Every managed parameter must receive a gradient in every synchronized
// backward. tandem checks at the end of that backward, on every rank at
// once (one float per parameter rides along with the last bucket): a
// parameter no rank used is an error naming it and the ranks, before any
// optimizer step sees unreduced gradients, unless find_unused_parameters:
// then unused parameters count as zero gradients, and one that no rank used
// keeps its .grad as it was (undefined if it was).
//
// State dicts: the wrapped module is the child "module", so keys read
// "module.<name>"; save ddp->module()->state_dict() for a bare model.
//
// Ranks with different numbers of batches: see nn::Join (join.h).
//
// GPUs: a module on one GPU per process, reduced over NCCL (built with
// TANDEM_CUDA where NCCL is installed; not yet run on a GPU).
//
// Communication hooks (register_comm_hook) replace the built-in averaging
// per bucket; comm_hooks::allreduce and comm_hooks::noop are built in.
//
// Not here yet: static_graph, SyncBatchNorm, compression hooks, PowerSGD.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"
#include "tandem/parallel/data_parallel.h"
#include "tandem/parallel/replicate.h"
#include "tandem/parallel/shares.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::distributed::detail {
class RankBalance;
struct RankStep;
class Reducer;
}  // namespace tandem::distributed::detail

namespace tandem::nn {

class DistributedDataParallelOptions {
 public:
  /// The group whose ranks share the training (default: the world group of
  /// init_process_group()).
  DistributedDataParallelOptions& process_group(
      std::shared_ptr<distributed::ProcessGroup> value) {
    process_group_ = std::move(value);
    return *this;
  }
  /// For a module on one GPU: that GPU (at most one entry; inputs are
  /// moved there). Leave unset for CPU modules.
  DistributedDataParallelOptions& device_ids(std::vector<Device> value) {
    device_ids_ = std::move(value);
    return *this;
  }
  /// Broadcast rank 0's buffers (batch-norm statistics) at construction
  /// and before every synchronized forward (default true).
  DistributedDataParallelOptions& broadcast_buffers(bool value) {
    broadcast_buffers_ = value;
    return *this;
  }
  /// The bucket size in MiB (default 25, with a 1 MiB first bucket; a value
  /// set here is the first bucket's cap too).
  DistributedDataParallelOptions& bucket_cap_mb(double value) {
    bucket_cap_mb_ = value;
    return *this;
  }
  /// Allow parameters that get no gradient in a backward pass (default
  /// false: that is an error naming them).
  DistributedDataParallelOptions& find_unused_parameters(bool value) {
    find_unused_parameters_ = value;
    return *this;
  }
  /// Make each .grad a view into its bucket (default true).
  DistributedDataParallelOptions& gradient_as_bucket_view(bool value) {
    gradient_as_bucket_view_ = value;
    return *this;
  }
  /// Start each bucket's allreduce while backward still runs (default
  /// true); false waits for the end of backward and reduces every bucket
  /// then, to measure what the overlap gains.
  DistributedDataParallelOptions& overlap(bool value) {
    overlap_ = value;
    return *this;
  }

  /// Bucket the gradients by this order from the first backward on: a
  /// permutation of the managed parameters' indices, as stats().
  /// grad_ready_order reports it after the first synchronized backward.
  /// Without it, the buckets follow the reverse parameter order until that
  /// backward shows the real order, and are reassigned once then. A run
  /// resumed from a checkpoint passes the order the first run found, so
  /// that its buckets, and with three or more ranks the rounding of their
  /// sums (an allreduce adds a bucket's elements in an order that depends
  /// on their offset), are bitwise those of the uninterrupted run.
  DistributedDataParallelOptions& grad_ready_order(std::vector<size_t> value) {
    grad_ready_order_ = std::move(value);
    return *this;
  }

  /// Every `n` synchronized backward passes (0: never, the default), the
  /// next training forward checks that the replicas' parameters are still
  /// bitwise equal (one allgather of a 64-bit checksum): a difference, say
  /// from an optimizer step that depends on the rank, raises
  /// ReplicaMismatchError on every rank, naming the ranks and the pass.
  DistributedDataParallelOptions& check_replicas_every(int64_t n) {
    check_replicas_every_ = n;
    return *this;
  }

  /// Each process takes this share of the global batch, one weight per
  /// rank (under Balance::kAuto, where the shares start); see balance().
  DistributedDataParallelOptions& shares(std::vector<double> weights) {
    shares_ = std::move(weights);
    return *this;
  }
  /// kEven (the default): nothing changes, as PyTorch's DDP, which divides
  /// the gradients' sum by the world size. With shares() or kAuto, every
  /// training forward exchanges the ranks' row counts and step times in one
  /// small allgather; each rank's gradient is weighted by its part of the
  /// batch (rows * world / total), so the result is the whole batch's
  /// gradient for a loss that is a mean over the rank's rows, whatever the
  /// parts; and cut(rows) tells every rank the same planned parts of a
  /// global batch (under kAuto, following the ranks' measured speeds), for
  /// the data loader to hand out (DataLoaderOptions::shard_cut).
  DistributedDataParallelOptions& balance(Balance value) {
    balance_ = value;
    return *this;
  }
  /// Invariant mode, as nn::DataParallelOptions::invariant, across
  /// processes: the weights a training run reaches are bitwise the same for
  /// any number of processes (and bitwise those of nn::DataParallel in
  /// invariant mode on any devices), with any shares or kAuto, at the same
  /// global batch, seed, dtype and micro_batch(). Each rank runs its part of
  /// the batch, whole micro-batches from cut(rows), each on a replica of its
  /// own; backward sums their gradients in the one tree over the
  /// micro-batch index across the ranks (Note [Invariant mode across
  /// processes] in src/distributed/gradient_tree_across.cpp), in place of
  /// the buckets' average. The loss must be the whole batch's: a sum over
  /// the rank's rows divided by the global batch's rows
  /// (global_batch_rows()), which is what a mean over the whole batch
  /// gives each row. A forward in training mode runs this way with or
  /// without gradients. Refuses BatchNorm while training, no_sync(), Join,
  /// comm hooks, check_replicas_every, parameters of several dtypes, a step
  /// in which some rank would hold no micro-batch, and a backward with
  /// create_graph.
  DistributedDataParallelOptions& invariant(bool value) {
    invariant_ = value;
    return *this;
  }
  /// Rows per micro-batch in invariant mode (default 32).
  DistributedDataParallelOptions& micro_batch(int64_t rows) {
    micro_batch_ = rows;
    return *this;
  }

  const std::shared_ptr<distributed::ProcessGroup>& process_group() const {
    return process_group_;
  }
  const std::optional<std::vector<double>>& shares() const { return shares_; }
  Balance balance() const { return balance_; }
  bool invariant() const { return invariant_; }
  int64_t micro_batch() const { return micro_batch_; }
  int64_t check_replicas_every() const { return check_replicas_every_; }
  const std::optional<std::vector<Device>>& device_ids() const { return device_ids_; }
  bool broadcast_buffers() const { return broadcast_buffers_; }
  const std::optional<double>& bucket_cap_mb() const { return bucket_cap_mb_; }
  bool find_unused_parameters() const { return find_unused_parameters_; }
  bool gradient_as_bucket_view() const { return gradient_as_bucket_view_; }
  bool overlap() const { return overlap_; }
  const std::vector<size_t>& grad_ready_order() const { return grad_ready_order_; }

 private:
  std::shared_ptr<distributed::ProcessGroup> process_group_;
  std::optional<std::vector<Device>> device_ids_;
  bool broadcast_buffers_ = true;
  std::optional<double> bucket_cap_mb_;
  bool find_unused_parameters_ = false;
  bool gradient_as_bucket_view_ = true;
  bool overlap_ = true;
  std::vector<size_t> grad_ready_order_;
  int64_t check_replicas_every_ = 0;
  std::optional<std::vector<double>> shares_;
  Balance balance_ = Balance::kEven;
  bool invariant_ = false;
  int64_t micro_batch_ = 32;
};

/// What DistributedDataParallel did so far (PyTorch's logging data).
struct DistributedDataParallelStats {
  /// The managed parameters' indices (registration order) per bucket, in
  /// reduction order, and each bucket's size in bytes.
  std::vector<std::vector<size_t>> bucket_indices;
  std::vector<int64_t> bucket_bytes;
  /// Whether the buckets were reassigned after the first synchronized
  /// backward (done once, unless find_unused_parameters).
  bool buckets_rebuilt = false;
  /// The order gradients became ready in the first synchronized backward
  /// (or the one DistributedDataParallelOptions::grad_ready_order gave).
  std::vector<size_t> grad_ready_order;
  /// Synchronized backward passes so far.
  int64_t synchronized_backwards = 0;
  /// Whether the buckets live in memory every rank of this host maps and
  /// are added there, without MPI (every rank on one host, on the CPU, no
  /// communication hook, TANDEM_SHARED_MEMORY not 0; Note [Reducing on the
  /// host] in src/distributed/host_allreduce.cpp).
  bool reduced_in_shared_memory = false;
};

class DistributedDataParallelImpl;
class Join;

/// One bucket of gradients as a communication hook sees it (PyTorch's
/// GradBucket).
struct GradBucket {
  size_t index = 0;  // in reduction order
  size_t count = 0;  // buckets in all
  /// The bucket's gradients, flat, not divided by the world size. The hook
  /// may reduce it in place or return another tensor of its size and dtype.
  Tensor buffer;
  /// Views of `buffer`, one per parameter, shaped like it.
  std::vector<Tensor> gradients;
  std::vector<Tensor> parameters;
  bool is_last() const { return index + 1 == count; }
};

/// Reduces one bucket: called once per bucket per synchronized backward,
/// in bucket order, on every rank (so it must issue the same collectives in
/// the same order everywhere). Its Work's result()[0] (or the buffer, if
/// the result is empty) holds the bucket's new gradients once it completes.
using CommHook = std::function<distributed::Work(GradBucket& bucket)>;

namespace comm_hooks {
/// What DistributedDataParallel does without a hook: divide by the world
/// size, then allreduce (SUM).
CommHook allreduce(std::shared_ptr<distributed::ProcessGroup> group);
/// Communicates nothing: each rank keeps its local gradients.
CommHook noop();
}  // namespace comm_hooks

/// While alive, forwards of `ddp` are not synchronized: their backward
/// passes only accumulate local gradients, and the first synchronized
/// backward after it averages everything accumulated (PyTorch's no_sync()
/// context; what counts is where the forward ran).
class [[nodiscard]] NoSyncGuard {
 public:
  explicit NoSyncGuard(DistributedDataParallelImpl& ddp);
  ~NoSyncGuard();
  NoSyncGuard(const NoSyncGuard&) = delete;
  NoSyncGuard& operator=(const NoSyncGuard&) = delete;

 private:
  DistributedDataParallelImpl& ddp_;
  bool previous_;
};

class DistributedDataParallelImpl : public Module {
 public:
  /// Wraps `module` (a holder such as Linear, or a shared_ptr to a module)
  /// whose forward takes a Tensor or a TensorTree. A collective.
  template <typename ModuleType>
  requires parallel::detail::replicable_module<
      parallel::detail::module_type_of_t<ModuleType>>
  explicit DistributedDataParallelImpl(const ModuleType& module,
                                       DistributedDataParallelOptions options = {})
      : DistributedDataParallelImpl(parallel::detail::module_pointer(module),
                                    parallel::detail::forward_of<
                                        parallel::detail::module_type_of_t<ModuleType>>(),
                                    std::move(options)) {}
  ~DistributedDataParallelImpl() override;

  /// One tensor in, one tensor out (the module must return one tensor).
  Tensor forward(const Tensor& input);
  /// A tensor or nested list in; the module's output out.
  parallel::TensorTree forward(const parallel::TensorTree& input);

  /// Forwards from now until the guard ends do not synchronize gradients.
  NoSyncGuard no_sync() { return NoSyncGuard(*this); }
  /// Whether the next forward's backward will be synchronized (false
  /// inside no_sync()).
  bool require_backward_grad_sync() const { return require_backward_grad_sync_; }

  const std::shared_ptr<Module>& module() const noexcept { return module_; }
  const std::shared_ptr<distributed::ProcessGroup>& process_group() const noexcept {
    return group_;
  }
  const DistributedDataParallelOptions& options() const noexcept { return options_; }
  DistributedDataParallelStats stats() const;
  /// Every rank's planned rows of a global batch of `rows` (the same on
  /// every rank): by the shares, or under kAuto as the measured speeds
  /// have moved them; with kEven and no shares, DataLoaderOptions::shard's
  /// split (parts that differ by at most one row, the larger first).
  std::vector<int64_t> cut(int64_t rows) const;
  /// The rows of the whole batch of the last forward with grad mode on
  /// (or in invariant mode), over every rank: exchanged with shares, kAuto
  /// and in invariant mode; otherwise this rank's rows times the world
  /// size.
  int64_t global_batch_rows() const noexcept { return global_batch_rows_; }
  /// The ranks' current shares, as fractions that sum to 1.
  std::vector<double> shares() const;
  /// Reduces the buckets with `hook` instead of the built-in averaging.
  /// Once, before the first synchronized backward.
  void register_comm_hook(CommHook hook);

 private:
  friend class NoSyncGuard;
  friend class Join;
  struct JoinMode {
    bool divide_by_initial_world_size = true;
    bool throw_on_early_termination = false;
  };
  DistributedDataParallelImpl(std::shared_ptr<Module> module,
                              parallel::detail::Forward forward,
                              DistributedDataParallelOptions options);
  void broadcast_buffers();
  // check_replicas_every: raises ReplicaMismatchError when due and the
  // replicas differ.
  void check_replicas();
  // Join (join.cpp): the active ranks' part of each forward with grad mode
  // on, and a joined rank's shadow of one such forward and its backward;
  // true while some rank is still active.
  void join_active_forward();
  bool join_shadow_iteration();

  std::shared_ptr<Module> module_;
  parallel::detail::Forward forward_;
  DistributedDataParallelOptions options_;
  std::shared_ptr<distributed::ProcessGroup> group_;
  std::optional<Device> input_device_;
  std::unique_ptr<distributed::detail::Reducer> reducer_;
  bool require_backward_grad_sync_ = true;
  // Whether the last forward armed the reducer; the next forward
  // broadcasts buffers only then (as PyTorch's require_forward_param_sync).
  bool require_forward_param_sync_ = true;
  std::optional<JoinMode> join_mode_;  // inside a Join
  int64_t replicas_checked_at_ = 0;    // synchronized backwards at the last check
  // With shares or kAuto; and when the last synchronized forward started.
  std::unique_ptr<distributed::detail::RankBalance> rank_balance_;
  std::chrono::steady_clock::time_point forward_start_{};
  int64_t global_batch_rows_ = 0;
  // Exchanges row counts and step times (rank_balance.h); sets the
  // reducer's gradient weight.
  void balance_step(const parallel::TensorTree& input);
  // The exchange of rank_balance_: this forward's `rows`, the previous
  // step's computing time (to `computed_until`), the mask seed; sets
  // global_batch_rows_ and restarts the step's clock.
  distributed::detail::RankStep exchange_rows(
      int64_t rows, std::chrono::steady_clock::time_point computed_until, uint64_t seed);
  // Invariant mode's training forward (options().invariant()).
  parallel::TensorTree invariant_forward(const parallel::TensorTree& input);
  // Invariant mode: the replicas, one per micro-batch of this rank, and
  // when the last backward's computing ended (shared with the gradient
  // sum, which may outlive this module in a graph).
  parallel::ReplicaCache micro_batch_replicas_;
  std::shared_ptr<std::chrono::steady_clock::time_point> tree_start_ =
      std::make_shared<std::chrono::steady_clock::time_point>();
};

TANDEM_MODULE(DistributedDataParallel);

}  // namespace tandem::nn
