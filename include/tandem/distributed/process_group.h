// ProcessGroup: collectives across the processes of a job, as PyTorch's
// c10d (torch.distributed): allreduce, broadcast, allgather, reduce_scatter
// and barrier, each asynchronous with a Work handle and a deadline. CPU
// tensors go over MPI; CUDA tensors over NCCL, in a build with the CUDA
// backend and NCCL (barrier is always MPI's).
//
// init_process_group() reads the MPI launcher's environment, so
// `mpirun -np 4 ./app` just works, across hosts too; started without a
// launcher the program is a group of one.
//
//   namespace dist = tandem::distributed;
//   int main() {
//     auto pg = dist::init_process_group();       // MPI_Init, the comm thread
//     auto x = tandem::full({4}, pg->rank() + 1.0);
//     pg->allreduce(x).wait();                     // x = 1 + 2 + ... + size
//     pg->broadcast(x, dist::BroadcastOptions().root_rank(0)).wait();
//   }                                  // at exit: wait for every rank, MPI_Finalize
//
// Tensors: contiguous, float32, float64 or int64, with the same shape and
// dtype on every rank (MPI and NCCL cannot check that: a mismatch hangs
// until the deadline or returns garbage). A call's tensors are all on the
// CPU or all on one GPU, and every rank calls it with the same kind.
// Arguments are checked on the calling thread before anything is queued; a
// rejected call sends nothing and takes no sequence number.
//
// CUDA tensors. Each rank uses one GPU, usually cuda:<get_local_rank()>
// (NCCL does not support two ranks on one GPU). The first collective on a
// GPU creates the group's NCCL communicator for it, which every rank joins
// at that same collective. A collective starts on the GPU after the work
// already queued on the tensors' device when it was called, and runs on a
// stream of its own, so later GPU work overlaps with it; wait() returns
// once the GPU has finished it (the rules of work.h hold as on the CPU).
// AVG is NCCL's, which for floating point multiplies by 1/size before the
// sum: the last bit can differ from the CPU's when size is not a power of
// two. See Note [NCCL collectives] in src/distributed/nccl/.
//
// Threads. Any thread may call any method; one communication thread makes
// every MPI and NCCL call (MPI_THREAD_FUNNELED: it called MPI_Init_thread).
// It starts the collectives in the order they were called, non-blocking
// (MPI_Iallreduce, ..., or ncclAllReduce, ... on a GPU stream), and polls
// them, which is what makes Open MPI's non-blocking collectives progress.
// Every rank must call the same collectives in the same order (as in
// PyTorch); with several calling threads, that order is the caller's to
// guarantee.
//
// Note [Failure is final]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A collective that misses its deadline fails with CollectiveTimeoutError;
// an MPI or NCCL error fails it with DistributedError. MPI cannot cancel a
// started collective, so the failure poisons the group (and aborts its NCCL
// communicators, which frees GPUs stuck in a collective): every pending and
// later call fails at once, naming the first failure, and the failed rank
// tells the others, whose pending and later calls fail with
// PeerFailureError. On
// timeout the rank asks every other rank's comm thread how far it got, so
// the message names who is missing:
//
//   allreduce #12 (sum, 1863690 float32 elements) timed out after 5 s on
//   rank 0 of 2: rank 1 has not called it yet (its last collective is #11)
//
// Recovery is a restart from a checkpoint: let the exception end the
// process. A process whose group failed always exits with status 1 (its
// exit skips MPI_Finalize, which could wait forever on the stuck collective,
// and prints the first failure to stderr), and mpirun then ends every other
// rank, so the job fails in bounded time and leaves no process behind.
// abort() ends the whole job at once (MPI_Abort).
//
// Leaving is collective too: at exit (or destroy_process_group()) a healthy
// group finishes its queued collectives, then waits for every other rank to
// leave as well, up to the group's timeout (plus 2 s), before MPI_Finalize.
// A rank that leaves while the others still wait for it in a collective is
// named in their error: "rank 1 is exiting instead (its last collective is
// #2)".
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/errors.h"
#include "tandem/distributed/options.h"
#include "tandem/distributed/work.h"

namespace tandem::distributed {

class ProcessGroup;

namespace detail {
class GroupState;
/// The state behind a group, for the library's own collectives.
const std::shared_ptr<GroupState>& group_state(const ProcessGroup& group);
}  // namespace detail

class ProcessGroup {
 public:
  explicit ProcessGroup(std::shared_ptr<detail::GroupState> state);

  /// The group of every process of the job; init_process_group() first.
  static std::shared_ptr<ProcessGroup> world();

  /// This process's rank in the group, 0 <= rank() < size().
  int rank() const;
  int size() const;
  /// "mpi" (collectives on CUDA tensors go over NCCL; see above).
  std::string backend_name() const { return "mpi"; }

  /// The default deadline of the group's collectives.
  std::chrono::milliseconds timeout() const;
  /// Changes it for collectives called from now on.
  void set_timeout(std::chrono::milliseconds timeout);

  /// Reduces `tensor` in place across ranks: afterwards every rank holds
  /// the elementwise SUM (AVG, PRODUCT, MIN, MAX) of all ranks' tensors.
  Work allreduce(const Tensor& tensor, const AllreduceOptions& options = {});
  /// Copies the root rank's `tensor` into every rank's `tensor`.
  Work broadcast(const Tensor& tensor, const BroadcastOptions& options = {});
  /// outputs[r] receives rank r's `input`; outputs holds size() tensors of
  /// input's shape and dtype (PyTorch's all_gather).
  Work allgather(const std::vector<Tensor>& outputs,
                 const Tensor& input,
                 const AllgatherOptions& options = {});
  /// `output` (size() * input.numel() elements) receives the ranks' inputs
  /// one after another (PyTorch's all_gather_into_tensor). `input` may be
  /// output's own slice for this rank (then nothing is copied locally).
  Work allgather_into_tensor(const Tensor& output,
                             const Tensor& input,
                             const AllgatherOptions& options = {});
  /// Reduces inputs[r] across ranks into rank r's `output`; inputs holds
  /// size() tensors of output's shape and dtype (PyTorch's reduce_scatter).
  Work reduce_scatter(const Tensor& output,
                      const std::vector<Tensor>& inputs,
                      const ReduceScatterOptions& options = {});
  /// Reduces `input` (size() * output.numel() elements) across ranks and
  /// gives rank r the r-th block (PyTorch's reduce_scatter_tensor).
  Work reduce_scatter_tensor(const Tensor& output,
                             const Tensor& input,
                             const ReduceScatterOptions& options = {});
  /// Completes once every rank has called it.
  Work barrier(const BarrierOptions& options = {});

  /// How many collectives this rank has called so far: the sequence number
  /// of the last one.
  uint64_t sequence_number() const;
  /// The first failure of the group (then every call fails), else null.
  std::exception_ptr error() const;

  /// Ends the whole job now: MPI_Abort on every process of the job, exit
  /// status `exit_code`. For a process that cannot go on after a failure
  /// and cannot unwind to main either.
  [[noreturn]] void abort(int exit_code = 1);

 private:
  friend const std::shared_ptr<detail::GroupState>& detail::group_state(
      const ProcessGroup& group);
  std::shared_ptr<detail::GroupState> state_;
};

/// Initializes MPI (if the application has not), starts the communication
/// thread and creates the world group. Call once, before any other thread
/// uses the group. Throws tandem::Error if already initialized.
std::shared_ptr<ProcessGroup> init_process_group(const ProcessGroupOptions& options = {});

/// Whether init_process_group() has run and destroy_process_group() has not.
bool is_initialized();

/// Whether an MPI launcher (mpirun/mpiexec of Open MPI or MPICH, or a
/// PMIx launcher such as srun) started this process, from the environment
/// it sets; initializes nothing. Lets a program choose between a
/// distributed run and a plain one without paying for MPI in the latter.
bool launched_by_mpi();

/// Whether collectives on CUDA tensors are available: this build has NCCL
/// (PyTorch's is_nccl_available()); says nothing about GPUs being present.
bool is_nccl_available();

/// Waits for the queued collectives and for every other rank to call it too
/// (within the group's timeout), ends the communication thread and
/// finalizes MPI: call it on every rank. MPI cannot be initialized again in
/// the same process. Optional: the same happens at exit, but a program
/// that used CUDA tensors should call it before main returns, so that the
/// NCCL communicators are destroyed before the CUDA runtime shuts down.
/// Throws the failure if a queued collective or the wait for the others
/// fails; after an earlier failure it only drops the group, at once (see
/// Note [Failure is final]).
void destroy_process_group();

/// The world group's rank and size.
int get_rank();
int get_world_size();
/// This process's rank among the processes of the job on its host, and how
/// many there are (for picking a GPU per process).
int get_local_rank();
int get_local_world_size();

}  // namespace tandem::distributed
