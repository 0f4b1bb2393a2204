// Collectives on CUDA tensors over NCCL, for the communication thread
// (comm_loop.cpp). Built only with the CUDA backend and NCCL.
//
// Note [NCCL collectives]
// ~~~~~~~~~~~~~~~~~~~~~~~
// A collective whose tensors are on a GPU runs on NCCL, in the group's one
// sequence of collectives (MPI's and NCCL's interleaved, numbered alike),
// with the same Work, deadline and failure rules as on the CPU.
//
// Communicators. One per group and GPU, made at this rank's first
// collective on that GPU, in that collective's place in the sequence: rank
// 0's ncclGetUniqueId goes to every rank in an MPI_Iallreduce (bitwise OR;
// the others give zeros) on the group's communicator. That allreduce is
// polled like any MPI collective, so a rank that never comes is named at
// the deadline ("rank 1 has not called it yet"), and it completes only
// once every rank has reached it, so the ncclCommInitRank that follows
// (blocking, on this thread) waits for ranks that are already on their way.
// Collectives on that GPU called meanwhile wait (OpStage::kHeld) and are
// then launched in order. Every rank must thus use its GPUs in the same
// pattern: one GPU per rank (cuda:<local rank>) is the usual choice. Two
// ranks on one GPU is not supported by NCCL.
//
// Streams. Each communicator has its own non-blocking stream. The call
// records `ready` on the GPU's stream (cuda_context.h) on the calling
// thread, after anything it queued there itself; the comm thread makes the
// NCCL stream wait for it, issues the one NCCL call (lists are packed into
// and unpacked from a flat buffer on the GPU, so no group calls are
// needed), and records `done`. The GPU's stream does not wait for `done`:
// later work on that stream (the rest of a backward pass) overlaps with
// the collective. Work::wait() waits on the host until `done` has fired,
// and the tensors may not be used before (work.h), so work queued after it
// sees the result. The op holds its tensors until `done`, so their memory
// (freed in the GPU stream's order) is never reused while NCCL uses it.
//
// Completion and failure. The comm thread polls `done` (cudaEventQuery)
// and every communicator's ncclCommGetAsyncError. An asynchronous error, a
// CUDA error or a failed launch fails the group (DistributedError with
// NCCL's message); a missed deadline fails it as on the CPU (the status
// query names the missing rank). Then every communicator of the group is
// aborted (ncclCommAbort), which stops the GPU's kernels stuck in a
// collective, and Note [Failure is final] applies. ncclAvg does AVG; for
// floating point it multiplies each rank's value by 1/size before the sum,
// so the result can differ from the CPU's (sum, then divide) in the last
// bit when size is not a power of two.
//
// Exit. A clean exit (every rank through the exit barrier, nothing in
// flight) destroys the communicators and their streams before
// MPI_Finalize; after a failure they were aborted, and the process exits
// without MPI_Finalize. At exit (rather than destroy_process_group()) the
// CUDA runtime may already be shutting down: what that destroy reports is
// ignored, since nothing more can be done then.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <map>
#include <optional>

#include "backend/cuda/cuda_context.h"
#include "backend/nccl/nccl_types.h"
#include "distributed/nccl_backend.h"
#include "distributed/state.h"
#include "tandem/core/error.h"

namespace tandem::distributed::detail {

struct NcclOp {
  NcclOp() = default;
  NcclOp(const NcclOp&) = delete;
  NcclOp& operator=(const NcclOp&) = delete;
  NcclOp(NcclOp&&) = delete;
  NcclOp& operator=(NcclOp&&) = delete;
  ~NcclOp() {
    try {
      backend::cuda::prepare(Device(kCUDA, device));
    } catch (const std::exception&) {
      // Destroy them from whatever device is current.
    }
    if (ready != nullptr) (void)cudaEventDestroy(ready);
    if (done != nullptr) (void)cudaEventDestroy(done);
  }

  int device = 0;
  cudaEvent_t ready = nullptr;
  cudaEvent_t done = nullptr;
};

void NcclOpDeleter::operator()(NcclOp* op) const { delete op; }

bool nccl_built() { return true; }

NcclOpPtr nccl_prepare(Device device) {
  cudaStream_t stream = backend::cuda::prepare(device);
  NcclOpPtr op(new NcclOp());
  op->device = device.index();
  TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&op->ready, cudaEventDisableTiming));
  TANDEM_CUDA_CHECK(cudaEventCreateWithFlags(&op->done, cudaEventDisableTiming));
  TANDEM_CUDA_CHECK(cudaEventRecord(op->ready, stream));
  return op;
}

namespace {

// "unhandled system error (run with NCCL_DEBUG=INFO for details): <NCCL's
// last error>".
std::string nccl_error(ncclResult_t result, ncclComm_t comm) {
  std::string message = ncclGetErrorString(result);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += detail::str(": ", last);
  return message;
}

void check_nccl(ncclResult_t result, const char* call, ncclComm_t comm) {
  if (result != ncclSuccess) {
    throw Error(detail::str(call, " failed: ", nccl_error(result, comm)));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
      return ncclSum;
    case ReduceOp::AVG:
      return ncclAvg;
    case ReduceOp::PRODUCT:
      return ncclProd;
    case ReduceOp::MIN:
      return ncclMin;
    case ReduceOp::MAX:
      return ncclMax;
  }
  return ncclSum;
}

// Queues `op`'s NCCL call on `stream`, and for an allgather into a list the
// copies out of the flat buffer after it.
void issue(const CollectiveOp& op, ncclComm_t comm, cudaStream_t stream, int rank) {
  const std::optional<ncclDataType_t> known = backend::nccl::nccl_type(op.dtype);
  TANDEM_INTERNAL_ASSERT(
      known, "no NCCL datatype for ", op.dtype, " (checked on enqueue)");
  const ncclDataType_t type = *known;
  const auto count = static_cast<size_t>(op.count);
  auto* recv = static_cast<char*>(op.recv.data_ptr());
  switch (op.kind) {
    case CollectiveKind::kAllreduce:
      check_nccl(
          ncclAllReduce(recv, recv, count, type, nccl_op(op.reduce_op), comm, stream),
          "ncclAllReduce",
          comm);
      return;
    case CollectiveKind::kBroadcast:
      check_nccl(ncclBroadcast(recv, recv, count, type, op.root, comm, stream),
                 "ncclBroadcast",
                 comm);
      return;
    case CollectiveKind::kAllgather: {
      const size_t block = count * element_size(op.dtype);
      // No separate input: it is already output's block for this rank.
      const void* send = op.send.defined() ? op.send.data_ptr()
                                           : recv + static_cast<size_t>(rank) * block;
      check_nccl(
          ncclAllGather(send, recv, count, type, comm, stream), "ncclAllGather", comm);
      for (size_t r = 0; r < op.unpack_to.size(); ++r) {
        TANDEM_CUDA_CHECK(cudaMemcpyAsync(op.unpack_to[r].data_ptr(),
                                          recv + r * block,
                                          block,
                                          cudaMemcpyDeviceToDevice,
                                          stream));
      }
      return;
    }
    case CollectiveKind::kReduceScatter:
      check_nccl(
          ncclReduceScatter(
              op.send.data_ptr(), recv, count, type, nccl_op(op.reduce_op), comm, stream),
          "ncclReduceScatter",
          comm);
      return;
    case CollectiveKind::kBarrier:
      break;
  }
  TANDEM_INTERNAL_ASSERT(false, "a barrier never runs on NCCL");
}

}  // namespace

struct NcclComms::Impl {
  struct Comm {
    State state = State::kNone;
    ncclUniqueId id{};  // written by the MPI allreduce in begin()
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };

  explicit Impl(const GroupState& group) : group(group) {}

  const GroupState& group;
  std::map<int, Comm> comms;  // by GPU index; a map keeps `id` in place
};

NcclComms::NcclComms(const GroupState& group) : impl_(std::make_unique<Impl>(group)) {}

NcclComms::~NcclComms() = default;

NcclComms::State NcclComms::state(int device) const {
  const auto it = impl_->comms.find(device);
  return it == impl_->comms.end() ? State::kNone : it->second.state;
}

std::string NcclComms::begin(int device, MPI_Request* request) {
  Impl::Comm& c = impl_->comms[device];
  c.state = State::kStarting;
  std::memset(&c.id, 0, sizeof(c.id));
  if (impl_->group.rank == 0) {
    const ncclResult_t result = ncclGetUniqueId(&c.id);
    if (result != ncclSuccess) {
      return "ncclGetUniqueId failed: " + nccl_error(result, nullptr);
    }
  }
  const int rc = MPI_Iallreduce(MPI_IN_PLACE,
                                &c.id,
                                static_cast<int>(sizeof(c.id)),
                                MPI_BYTE,
                                MPI_BOR,
                                impl_->group.comm,
                                request);
  if (rc != MPI_SUCCESS) {
    *request = MPI_REQUEST_NULL;
    return "MPI could not start sharing the NCCL communicator's id: " +
           mpi_error_string(rc);
  }
  return "";
}

std::string NcclComms::create(int device) {
  Impl::Comm& c = impl_->comms.at(device);
  try {
    backend::cuda::prepare(Device(kCUDA, device));
    TANDEM_CUDA_CHECK(cudaStreamCreateWithFlags(&c.stream, cudaStreamNonBlocking));
  } catch (const std::exception& e) {
    return e.what();
  }
  const ncclResult_t result =
      ncclCommInitRank(&c.comm, impl_->group.size, c.id, impl_->group.rank);
  if (result != ncclSuccess) {
    c.comm = nullptr;
    return detail::str(
        "ncclCommInitRank on cuda:", device, " failed: ", nccl_error(result, nullptr));
  }
  c.state = State::kReady;
  return "";
}

std::string NcclComms::launch(CollectiveOp& op) {
  const Impl::Comm& c = impl_->comms.at(op.nccl->device);
  try {
    backend::cuda::prepare(Device(kCUDA, op.nccl->device));
    TANDEM_CUDA_CHECK(cudaStreamWaitEvent(c.stream, op.nccl->ready, 0));
    // Every rank has the same count (a requirement), so all skip alike.
    if (op.count > 0) issue(op, c.comm, c.stream, impl_->group.rank);
    TANDEM_CUDA_CHECK(cudaEventRecord(op.nccl->done, c.stream));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

NcclComms::Poll NcclComms::poll(const CollectiveOp& op) const {
  const cudaError_t status = cudaEventQuery(op.nccl->done);
  if (status == cudaSuccess) return {true, ""};
  // Not ready is no error, but the runtime records it as the last one.
  (void)cudaGetLastError();
  if (status == cudaErrorNotReady) return {};
  return {true,
          detail::str("CUDA error on cuda:",
                      op.nccl->device,
                      ": ",
                      cudaGetErrorName(status),
                      ": ",
                      cudaGetErrorString(status))};
}

std::string NcclComms::async_error() const {
  for (const auto& [device, c] : impl_->comms) {
    if (c.comm == nullptr) continue;
    ncclResult_t error = ncclSuccess;
    const ncclResult_t result = ncclCommGetAsyncError(c.comm, &error);
    if (result != ncclSuccess) error = result;
    if (error != ncclSuccess && error != ncclInProgress) {
      return detail::str(
          "NCCL reported an error on cuda:", device, ": ", nccl_error(error, c.comm));
    }
  }
  return "";
}

void NcclComms::abort() {
  for (auto& [device, c] : impl_->comms) {
    if (c.comm == nullptr) continue;
    (void)ncclCommAbort(c.comm);  // the group has failed already
    c.comm = nullptr;
  }
}

void NcclComms::destroy() {
  // Nothing is in flight, and nothing could be done about a failure here:
  // the group is over, and the driver frees what is left at exit.
  for (auto& [device, c] : impl_->comms) {
    if (c.comm != nullptr) (void)ncclCommDestroy(c.comm);
    c.comm = nullptr;
    if (c.stream != nullptr) (void)cudaStreamDestroy(c.stream);
    c.stream = nullptr;
  }
}

}  // namespace tandem::distributed::detail
