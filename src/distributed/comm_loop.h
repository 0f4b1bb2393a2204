// The communication thread's loop: starts queued collectives in order,
// polls them (which is what makes Open MPI's non-blocking collectives
// progress), enforces their deadlines, and serves the health channel.
// Private to src/distributed/.
#pragma once

#include <memory>
#include <vector>

#include <mpi.h>

#include "distributed/health_channel.h"
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
  void start_exit_barrier();
  bool poll();
  void complete(CollectiveOp& op, int mpi_error);
  void check_deadlines();
  std::string timeout_message(const CollectiveOp& op) const;
  /// Poisons the group with `message` (if it is the first failure), fails
  /// `root` and every collective still outstanding, and tells the other
  /// ranks when `notify`.
  void fail_group(FailureKind kind,
                  const std::string& message,
                  CollectiveOp* root,
                  bool notify);
  std::string failed_earlier(const CollectiveOp& op) const;

  Runtime& runtime_;
  std::shared_ptr<GroupState> group_;
  HealthChannel health_;
  /// Started and not yet finished by MPI (even if their Work has failed).
  std::vector<std::unique_ptr<CollectiveOp>> active_;
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
