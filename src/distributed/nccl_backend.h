// Private: collectives on CUDA tensors, over NCCL. nccl/ implements this in
// a build with CUDA and NCCL; no_nccl/ otherwise, where nccl_built() is
// false and ProcessGroup refuses CUDA tensors before anything here is
// reached. No CUDA or NCCL header here. See Note [NCCL collectives] in
// nccl/nccl_collectives.cpp.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "tandem/core/device.h"

namespace tandem::distributed::detail {

struct CollectiveOp;
class GroupState;

/// Whether this build runs collectives on CUDA tensors (with NCCL).
bool nccl_built();

/// A CUDA collective's two events: `ready` (the point on its GPU's stream
/// where it was called) and `done` (on the NCCL stream, after it).
struct NcclOp;
struct NcclOpDeleter {
  void operator()(NcclOp* op) const;
};
using NcclOpPtr = std::unique_ptr<NcclOp, NcclOpDeleter>;

/// On the calling thread, after anything the call itself queued on the GPU
/// (packing an input, allocating a buffer): records `ready` on `device`'s
/// stream. Only with nccl_built().
NcclOpPtr nccl_prepare(Device device);

/// A group's NCCL communicators, one per GPU this rank has used in it, each
/// made at the first collective on that GPU. Owned and called by the
/// group's communication thread only.
class NcclComms {
 public:
  explicit NcclComms(const GroupState& group);
  ~NcclComms();
  NcclComms(const NcclComms&) = delete;
  NcclComms& operator=(const NcclComms&) = delete;
  NcclComms(NcclComms&&) = delete;
  NcclComms& operator=(NcclComms&&) = delete;

  enum class State { kNone, kStarting, kReady };
  State state(int device) const;

  /// Starts `device`'s communicator: rank 0's unique id goes to every rank
  /// in a non-blocking MPI allreduce on the group's communicator, which
  /// completes once every rank has reached it. Returns "" or the error.
  std::string begin(int device, MPI_Request* request);
  /// Once that request has completed: ncclCommInitRank. Returns "" or the
  /// error.
  std::string create(int device);

  /// Queues `op` on its GPU's NCCL stream (the communicator is ready).
  /// Returns "" or the error; after an error the GPU may still use the
  /// op's tensors.
  std::string launch(CollectiveOp& op);

  struct Poll {
    bool done = false;
    std::string error;  // done with a CUDA error
  };
  /// Whether `op`'s `done` event has fired.
  Poll poll(const CollectiveOp& op) const;

  /// The first asynchronous error a communicator reports ("" if none).
  std::string async_error() const;
  /// ncclCommAbort on every communicator: after a failure, so that no GPU
  /// stays stuck in a collective. Later calls do nothing.
  void abort();
  /// ncclCommDestroy on every communicator, at a clean exit (every rank
  /// has left the exit barrier, nothing is in flight).
  void destroy();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tandem::distributed::detail
