// tandem::distributed: multi-process data parallelism, as PyTorch's
// torch.distributed.
//
// - process_group.h: init_process_group, ProcessGroup (allreduce,
//   broadcast, allgather, reduce_scatter, barrier over MPI), deadlines
// - work.h: Work, the handle of a collective in flight
// - c10d.h: tandem::c10d, LibTorch's c10d spelling of the above
//   (ProcessGroupMPI, allreduce on a vector of one tensor, ...)
// - options.h: ReduceOp, AllreduceOptions, BroadcastOptions, ...
// - errors.h: DistributedError, CollectiveTimeoutError, PeerFailureError,
//   ModelMismatchError, UnusedParameterError
// - distributed_data_parallel.h: nn::DistributedDataParallel (DDP)
// - join.h: nn::Join, DDP with uneven inputs
// - bucket_assignment.h: how DDP groups gradients into buckets
// - trace.h: gather_trace, every rank's profile on rank 0's clock
//
//   namespace dist = tandem::distributed;
//   auto pg = dist::init_process_group();
//   pg->allreduce(grad, dist::AllreduceOptions().reduce_op(dist::ReduceOp::AVG)).wait();
#pragma once

#include "tandem/distributed/bucket_assignment.h"
#include "tandem/distributed/c10d.h"
#include "tandem/distributed/distributed_data_parallel.h"
#include "tandem/distributed/errors.h"
#include "tandem/distributed/join.h"
#include "tandem/distributed/options.h"
#include "tandem/distributed/process_group.h"
#include "tandem/distributed/trace.h"
#include "tandem/distributed/work.h"
