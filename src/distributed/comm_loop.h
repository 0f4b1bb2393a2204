// The communication thread's loop: starts queued collectives in order
// (MPI's on CPU tensors, NCCL's on CUDA tensors), polls them (which is what
// makes Open MPI's non-blocking collectives progress), enforces their
// deadlines, and serves the health channel. Private to src/distributed/.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "distributed/health_channel.h"
#include "distributed/host_window.h"
#include "distributed/nccl_backend.h"
#include "distributed/state.h"

namespace tandem::distributed::detail {

class Runtime;

class CommLoop {
 public:
  CommLoop(Runtime& runtime, std::shared_ptr<GroupState> group);

  /// Runs until the runtime asks it to stop. Returns true when everything
  /// finished cleanly (MPI may be finalized), false after a failure (MPI
  /// must not be: a started collective can never be freed).
  bool run();

 private:
  void start(std::unique_ptr<CollectiveOp> op);
  /// Hands `op` (already in active_) to MPI or its GPU.
  void begin(CollectiveOp& op);
  /// MPI refused to start `what` of `op` with error `rc`: fails the group.
  void start_failed(CollectiveOp& op, std::string_view what, int rc);
  /// TANDEM_DISTRIBUTED_DEBUG=detail: starts the check of the oldest
  /// unchecked collective, unless one is being checked.
  void check_next();
  /// `op`'s check gathered every rank's signature: runs it, or fails the
  /// group naming the difference.
  void check_done(CollectiveOp& op);
  /// Fails the group if a collective waits for a rank that announced its
  /// exit before it (Note [Leaving early]).
  void check_peer_exits();
  /// start() of a CUDA collective (already in active_): launches it, holds
  /// it while its GPU's communicator is being made, or starts making it.
  void start_on_gpu(CollectiveOp& op);
  /// `op`'s request made its GPU's communicator's id known: makes the
  /// communicator and launches the collectives that waited for it.
  void communicator_ready(CollectiveOp& op);
  /// Queues a CUDA collective on its GPU, or fails the group.
  void launch(CollectiveOp& op);
  void start_exit_barrier();
  /// How long the loop may wait for new requests.
  std::chrono::microseconds idle_wait() const;
  bool poll();
  bool poll_mpi();
  bool poll_gpu();
  /// Adds a chunk of each shared-memory reduction that has one free, and
  /// completes those every rank has finished (host_allreduce.h).
  bool poll_host();
  /// This rank's bell in the window of a shared-memory reduction in
  /// flight, if there is one.
  HostWindow::Bell* host_bell() const;
  /// Finishes `op` with `error` ("": success).
  void complete(CollectiveOp& op, const std::string& error);
  /// The collective's span, from begin() to now, if a profiler records.
  void record_span(CollectiveOp& op);
  void check_deadlines();
  std::string timeout_message(const CollectiveOp& op) const;
  /// Poisons the group with `message` (if it is the first failure), fails
  /// `root` and every collective still outstanding, and tells the other
  /// ranks when `notify`; prints the hang report first when `hang_report`.
  void fail_group(FailureKind kind,
                  const std::string& message,
                  CollectiveOp* root,
                  bool notify,
                  bool hang_report = false);
  /// Prints this rank's recent collectives to stderr (Note [The hang
  /// report] in flight_recorder.cpp).
  void print_hang_report();
  std::string failed_earlier(const CollectiveOp& op) const;

  Runtime& runtime_;
  std::shared_ptr<GroupState> group_;
  HealthChannel health_;
  NcclComms nccl_;
  /// Started and not yet finished by MPI or the GPU (even if their Work has
  /// failed), in the order they were started.
  std::vector<std::unique_ptr<CollectiveOp>> active_;
  /// TANDEM_DISTRIBUTED_DEBUG=detail: called, waiting for their check, in
  /// order; and the one being checked (in active_), or null.
  std::deque<std::unique_ptr<CollectiveOp>> unchecked_;
  CollectiveOp* checking_ = nullptr;
  /// The collective that missed its deadline while the status query runs.
  CollectiveOp* timing_out_ = nullptr;
  /// The exit barrier (see Note [Leaving together]) has been started.
  bool exiting_ = false;
  Clock::time_point query_deadline_;

  std::vector<MPI_Request> requests_;
  std::vector<int> indices_;
  std::vector<MPI_Status> statuses_;
};

}  // namespace tandem::distributed::detail
