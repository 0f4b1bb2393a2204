// The errors a process group raises. All derive from tandem::Error, so one
// `catch (const tandem::Error&)` handles misuse and communication failures
// alike; catch the subclasses to tell a timeout from a failed peer.
//
//   try {
//     pg->allreduce(bucket).wait();
//   } catch (const tandem::distributed::CollectiveTimeoutError& e) {
//     // "allreduce #12 (sum, 1863690 float32 elements) timed out after 5 s
//     //  on rank 0 of 2: rank 1 has not called it yet (its last collective
//     //  is #11)"
//     return 1;  // let the job end: see Note [Failure is final] in process_group.h
//   }
#pragma once

#include "tandem/core/error.h"

namespace tandem::distributed {

/// A collective failed: MPI reported an error (the message carries
/// MPI_Error_string), or the process group is unusable after an earlier
/// failure (the message names that first failure).
class DistributedError : public Error {
 public:
  using Error::Error;
};

/// A collective did not complete before its deadline. The message names the
/// operation, its sequence number, the timeout, this rank, and what each
/// other rank reported about its own progress.
class CollectiveTimeoutError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// Another rank's process group failed (a timeout or an MPI error there) and
/// it told this rank, so this rank fails at once instead of at its deadline.
class PeerFailureError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// With TANDEM_DISTRIBUTED_DEBUG=detail, the ranks compared a collective
/// before running it and found that they call different ones (another
/// operation, dtype, element count or root); every rank raises it, naming
/// each rank's call.
class CollectiveMismatchError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// DistributedDataParallel's construction found that the ranks wrap
/// different models; every rank raises it, naming the first difference.
class ModelMismatchError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// A synchronized backward pass left managed parameters without a gradient
/// (and find_unused_parameters is off); every rank raises it, naming them.
class UnusedParameterError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

/// DistributedDataParallel's replica check (check_replicas_every) found
/// parameters that differ between ranks.
class ReplicaMismatchError : public DistributedError {
 public:
  using DistributedError::DistributedError;
};

}  // namespace tandem::distributed
