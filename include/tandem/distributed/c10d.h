// tandem::c10d: LibTorch's c10d process-group API (ProcessGroupMPI, Work,
// ReduceOp, AllreduceOptions, ...) as a thin face over tandem's own
// distributed::ProcessGroup, so that a LibTorch program that communicates
// through c10d ports by renaming `torch::` to `tandem::` and `c10d::` to
// `tandem::c10d::` (and its includes to "tandem/tandem.h"). Collectives,
// deadlines and failures are those of process_group.h and work.h; this file
// only changes their spelling.
//
//   auto pg = tandem::c10d::ProcessGroupMPI::createProcessGroupMPI();
//   std::vector<tandem::Tensor> tensors = {grad};
//   auto work = pg->allreduce(tensors);  // SUM, in place, asynchronous
//   work->wait();                        // throws the collective's failure
//   pg->allreduce(tensors, {.reduceOp = tandem::c10d::ReduceOp::AVG})->wait();
//
// Handles are std::shared_ptr, where LibTorch has had std::shared_ptr (as
// the pytorch/examples programs spell them) and later c10::intrusive_ptr:
// `auto` and `->` work with either. ProcessGroup::Work names c10d::Work, as
// it did in LibTorch before 1.13.
//
// Note [One tensor per c10d call]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// LibTorch's collectives take a vector of tensors, once meant as one tensor
// per local GPU of the process. Its MPI backend has always refused any
// other count than one ("MPI process group does not support multi-GPU
// collectives"), and tandem runs one device per rank too, so every call
// here takes exactly one tensor and names the call and the count
// otherwise. Reducing several tensors one after another instead would
// silently change what such a vector meant.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/options.h"
#include "tandem/distributed/process_group.h"
#include "tandem/distributed/work.h"

namespace tandem::c10d {

/// c10d::ReduceOp::SUM, AVG, PRODUCT, MIN, MAX (no bitwise operators).
using ReduceOp = distributed::ReduceOp;

/// A timeout field left as it is: the group's timeout applies.
inline constexpr std::chrono::milliseconds kUnsetTimeout{-1};
/// Work::wait's default: wait until the collective ends (its deadline).
inline constexpr std::chrono::milliseconds kNoTimeout{0};

// The options, as LibTorch's aggregates: AllreduceOptions{.reduceOp = ...}.
struct AllreduceOptions {
  ReduceOp reduceOp = ReduceOp::SUM;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct BroadcastOptions {
  int64_t rootRank = 0;
  /// Which tensor of the call's vector is the source: always 0 here (see
  /// Note [One tensor per c10d call]).
  int64_t rootTensor = 0;
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct AllgatherOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

struct BarrierOptions {
  std::chrono::milliseconds timeout = kUnsetTimeout;
};

/// One collective in flight (LibTorch's c10d::Work).
class Work {
 public:
  explicit Work(distributed::Work work) : work_(std::move(work)) {}

  /// Finished, successfully or not.
  bool isCompleted() const { return work_.is_completed(); }
  /// Finished without error.
  bool isSuccess() const { return work_.is_success(); }
  /// The failure once finished with one, else null.
  std::exception_ptr exception() const { return work_.exception(); }
  /// Blocks until the collective ends and throws its failure; returns true.
  /// A `timeout` other than kNoTimeout fails it sooner (see Work::wait in
  /// work.h: the group is then unusable, as after any timeout).
  bool wait(std::chrono::milliseconds timeout = kNoTimeout);
  /// The tensors the collective wrote.
  std::vector<Tensor> result() const { return work_.result(); }

  /// tandem's handle beneath.
  const distributed::Work& work() const { return work_; }

 private:
  distributed::Work work_;
};

/// LibTorch's c10d::ProcessGroup: every rank of the job. The vectors are
/// LibTorch's; each holds one tensor (Note [One tensor per c10d call]).
class ProcessGroup {
 public:
  using Work = c10d::Work;

  explicit ProcessGroup(std::shared_ptr<distributed::ProcessGroup> group);

  int getRank() const { return group_->rank(); }
  int getSize() const { return group_->size(); }
  std::string getBackendName() const { return group_->backend_name(); }

  /// Reduces tensors[0] in place across ranks.
  std::shared_ptr<Work> allreduce(std::vector<Tensor>& tensors,
                                  const AllreduceOptions& opts = AllreduceOptions());
  /// Copies rank opts.rootRank's tensors[0] into every rank's tensors[0].
  std::shared_ptr<Work> broadcast(std::vector<Tensor>& tensors,
                                  const BroadcastOptions& opts = BroadcastOptions());
  /// outputTensors[0][r] receives rank r's inputTensors[0]; outputTensors
  /// holds one list of getSize() tensors.
  std::shared_ptr<Work> allgather(std::vector<std::vector<Tensor>>& outputTensors,
                                  std::vector<Tensor>& inputTensors,
                                  const AllgatherOptions& opts = AllgatherOptions());
  /// Completes once every rank has called it.
  std::shared_ptr<Work> barrier(const BarrierOptions& opts = BarrierOptions());

  /// tandem's group beneath.
  const std::shared_ptr<distributed::ProcessGroup>& group() const { return group_; }

 private:
  std::shared_ptr<distributed::ProcessGroup> group_;
};

/// LibTorch's MPI process group: tandem's world group.
class ProcessGroupMPI : public ProcessGroup {
 public:
  using ProcessGroup::ProcessGroup;

  /// The group of every rank: initializes tandem's process group (and MPI)
  /// unless the program has, else joins the group it made. `ranks` may
  /// name a subgroup in LibTorch; here it must be empty or list every rank
  /// in order.
  static std::shared_ptr<ProcessGroupMPI> createProcessGroupMPI(
      const std::vector<int>& ranks = {});

  /// Ends the whole job now (MPI_Abort), as LibTorch's does.
  [[noreturn]] void abort() { group()->abort(); }
};

}  // namespace tandem::c10d
