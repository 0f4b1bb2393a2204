// The shared state behind Work and ProcessGroup handles, and the record of
// one collective as the communication thread sees it. Private to
// src/distributed/.
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "distributed/flight_recorder.h"
#include "distributed/nccl_backend.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/options.h"

namespace tandem::distributed::detail {

class HostAllreduce;

using Clock = std::chrono::steady_clock;
// Messages are built with tandem::detail::str; this namespace is also
// called detail, so name it here.
using ::tandem::detail::str;

/// How long a timed-out rank waits for the other ranks' status replies
/// before it raises; see Note [Naming the missing rank] in comm_loop.cpp.
inline constexpr std::chrono::milliseconds kStatusQueryBudget{1000};
/// How long a waiter gives the communication thread past a deadline (plus
/// the status query) before it concludes the thread is stuck and raises on
/// its own.
inline constexpr std::chrono::milliseconds kCommThreadGrace{2000};

/// "5 s", "2.5 s", "300 ms".
std::string format_duration(std::chrono::milliseconds d);

/// kBackend: MPI or NCCL reported an error (DistributedError); kMismatch:
/// the ranks called different collectives (CollectiveMismatchError, found
/// by TANDEM_DISTRIBUTED_DEBUG=detail).
enum class FailureKind { kBackend, kTimeout, kPeer, kMismatch };

/// The first failure of a group poisons it; see Note [Failure is final] in
/// process_group.h.
class GroupState {
 public:
  GroupState(int rank,
             int size,
             MPI_Comm comm,
             MPI_Comm health,
             MPI_Comm check,
             std::chrono::milliseconds timeout)
      : rank(rank),
        size(size),
        comm(comm),
        health(health),
        check(check),
        timeout_ms_(timeout.count()) {}

  const int rank;
  const int size;
  const MPI_Comm comm;    // collectives
  const MPI_Comm health;  // status queries and failure notices (comm_loop.cpp)
  /// With TANDEM_DISTRIBUTED_DEBUG=detail, the ranks compare each
  /// collective on this one before running it (Note [Checking collectives]
  /// in collective_check.cpp); MPI_COMM_NULL otherwise.
  const MPI_Comm check;
  /// The last collectives, for the hang report.
  FlightRecorder recorder;

  std::chrono::milliseconds timeout() const {
    return std::chrono::milliseconds(timeout_ms_.load(std::memory_order_relaxed));
  }
  void set_timeout(std::chrono::milliseconds t) { timeout_ms_.store(t.count()); }

  /// "rank 0 of 2".
  std::string where() const;

  /// Records the group's first failure; later calls are ignored. Returns
  /// whether this call was the first.
  bool fail(FailureKind kind, const std::string& message);
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  /// The first failure's message ("" if none), and its kind.
  std::string failure_message() const;
  FailureKind failure_kind() const;
  /// An exception of the first failure's type carrying `message`.
  std::exception_ptr make_error(const std::string& message) const;
  /// The first failure itself, or null.
  std::exception_ptr error() const;

  // Progress counters, by sequence number. `enqueued` is written under the
  // runtime's queue lock; `started` and `completed` by the comm thread; all
  // are read by status replies and sequence_number().
  std::atomic<uint64_t> enqueued{0};
  std::atomic<uint64_t> started{0};
  std::atomic<uint64_t> completed{0};
  /// Set by destroy_process_group(): later calls raise.
  std::atomic<bool> destroyed{false};
  /// Set by the comm thread once it waits for the other ranks at exit.
  std::atomic<bool> exiting{false};
  /// Set once the hang report has printed the failure.
  std::atomic<bool> failure_reported{false};

 private:
  std::atomic<int64_t> timeout_ms_;
  std::atomic<bool> failed_{false};
  mutable std::mutex mu_;
  FailureKind kind_ = FailureKind::kBackend;
  std::string message_;
};

/// Shared by the Work handles of one collective and the comm thread.
class WorkState {
 public:
  WorkState(std::shared_ptr<GroupState> group,
            uint64_t seq,
            std::string description,
            std::vector<Tensor> outputs,
            Clock::time_point enqueued,
            std::chrono::milliseconds timeout);

  const std::shared_ptr<GroupState> group;
  const uint64_t seq;
  const std::string description;
  const std::vector<Tensor> outputs;
  const Clock::time_point enqueued;

  Clock::time_point deadline() const {
    return Clock::time_point(Clock::duration(deadline_.load(std::memory_order_acquire)));
  }
  /// Moves the deadline earlier (never later).
  void lower_deadline(Clock::time_point t);

  /// Marks the collective finished, with `error` or successfully (null).
  /// The first call wins; returns whether this was it.
  bool finish(std::exception_ptr error);
  bool is_completed() const;
  std::exception_ptr exception() const;
  /// Blocks until finished (see Work::wait) and rethrows a failure.
  void wait(std::optional<std::chrono::milliseconds> timeout);

 private:
  std::atomic<Clock::rep> deadline_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::exception_ptr error_;
};

enum class CollectiveKind {
  kAllreduce,
  kBroadcast,
  kAllgather,
  kReduceScatter,
  kBarrier
};

/// Where a collective is on the communication thread.
enum class OpStage {
  kMpi,           // an MPI collective in flight (`request`)
  kCommunicator,  // CUDA: `request` shares the id of its GPU's new NCCL communicator
  kHeld,          // CUDA: waits for an earlier collective to make the communicator
                  // (or, after its launch failed, for the end of the process)
  kCheck,         // TANDEM_DISTRIBUTED_DEBUG=detail: `request` gathers every rank's
                  // signature of this collective (collective_check.h)
  kGpu,           // CUDA: queued on the GPU's NCCL stream
  kHost,          // the ranks' comm threads add it in shared memory (`host`)
  kDone           // finished by MPI or the GPU: the comm thread drops it
};

/// One queued collective. Its tensors stay referenced here until MPI (or
/// the GPU) is done with them, whatever happens to the caller's handles.
struct CollectiveOp {
  CollectiveKind kind = CollectiveKind::kBarrier;
  ReduceOp reduce_op = ReduceOp::SUM;
  int root = 0;
  ScalarType dtype = kFloat32;
  /// Elements per rank: the whole tensor for allreduce and broadcast, one
  /// rank's block for allgather and reduce_scatter.
  int count = 0;
  /// allreduce, broadcast: the tensor (in place). allgather: the flat
  /// output. reduce_scatter: the output.
  Tensor recv;
  /// allgather, reduce_scatter: the input (undefined: MPI_IN_PLACE).
  Tensor send;
  /// allgather into a list: where the flat output's blocks go at the end.
  std::vector<Tensor> unpack_to;

  /// CUDA tensors (all on recv's GPU): the NCCL side; null on the CPU.
  NcclOpPtr nccl;
  /// An allreduce of a HostWindow's tensor, done in shared memory
  /// (host_allreduce.h); null for MPI's.
  std::shared_ptr<HostAllreduce> host;

  std::shared_ptr<WorkState> work;
  /// The profiler's name for it ("allreduce bucket 0 of 3") and, while a
  /// profiler session records, when the communication thread began it.
  std::string span_name;
  int64_t span_start_ns = 0;
  OpStage stage = OpStage::kMpi;
  /// kCheck: every rank's signature, gathered.
  std::vector<int64_t> signatures;
  MPI_Request request = MPI_REQUEST_NULL;
};

/// Starts `op` (MPI_Iallreduce, ...); returns the MPI error code.
int start_collective(CollectiveOp& op, const GroupState& group);
/// The local part after MPI is done: AVG's division, a list's unpacking
/// (nothing for a CUDA collective: NCCL did both on the GPU).
void finish_collective(CollectiveOp& op, const GroupState& group);

/// MPI_Error_string of `code`, e.g. "MPI_ERR_TRUNCATE: message truncated".
std::string mpi_error_string(int code);

}  // namespace tandem::distributed::detail
