// The process-wide MPI runtime: owns MPI's initialization and finalization,
// the communication thread, the queue of collectives waiting for it, and
// what happens at exit. One per process (MPI is); private to
// src/distributed/.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "distributed/host_window.h"
#include "distributed/state.h"
#include "tandem/distributed/options.h"
#include "tandem/distributed/work.h"

namespace tandem::distributed::detail {

class CommLoop;

/// What the comm thread is asked to do besides its collectives.
struct Requests {
  std::deque<std::unique_ptr<CollectiveOp>> queue;
  bool stop = false;  // drain, then finalize (or not, after a failure)
  bool abort = false;
  int abort_code = 1;
};

class Runtime {
 public:
  /// The one runtime, made on first use and never destroyed (the comm
  /// thread may outlive static destruction; see at_exit()).
  static Runtime& instance();

  std::shared_ptr<GroupState> init(const ProcessGroupOptions& options);
  bool is_initialized() const;
  /// The world group; throws tandem::Error before init_process_group().
  std::shared_ptr<GroupState> world() const;
  int local_rank() const;
  int local_size() const;

  /// Queues `op` on `group`, numbering it and building its description
  /// ("allreduce #12" + summary). Throws at once if the group failed or was
  /// destroyed (naming `name`, e.g. "allreduce").
  Work enqueue(const std::shared_ptr<GroupState>& group,
               std::unique_ptr<CollectiveOp> op,
               std::string_view name,
               std::string_view summary,
               std::optional<std::chrono::milliseconds> timeout);

  /// Wakes the comm thread (a deadline moved, or something was queued).
  void wake();
  void destroy();
  [[noreturn]] void abort(int exit_code);

  // ---- for the comm thread (comm_loop.cpp) ----
  /// Moves the queued collectives and the stop/abort flags into `out`;
  /// waits up to `idle` for something to arrive when there is nothing, or
  /// (with `bell`, read as `seen`) for the bell to ring.
  void take_requests(Requests& out,
                     std::chrono::microseconds idle,
                     HostWindow::Bell* bell = nullptr,
                     uint32_t seen = 0);

 private:
  Runtime() = default;
  void thread_main(std::chrono::milliseconds timeout, bool check_collectives);
  static void at_exit();
  [[noreturn]] static void exit_after_failure(const GroupState& group);
  /// Wakes the comm thread, on the condition variable or its bell.
  void notify_comm_thread();

  enum class State { kNone, kStarting, kRunning, kStopped, kFailedStopped };

  mutable std::mutex api_mu_;  // init, destroy, at_exit
  std::condition_variable started_cv_;
  std::string start_error_;

  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  /// The bell the comm thread sleeps on instead of cv_, if it does.
  std::atomic<HostWindow::Bell*> bell_{nullptr};
  Requests requests_;
  State state_ = State::kNone;
  std::shared_ptr<GroupState> world_;
  int local_rank_ = 0;
  int local_size_ = 1;
  bool owns_mpi_ = false;

  std::thread thread_;
};

}  // namespace tandem::distributed::detail
