// Starting one collective with MPI's non-blocking calls, and the local work
// after MPI is done with it. Runs on the communication thread only.
#include <cstring>

#include "distributed/state.h"
#include "tandem/core/error.h"

namespace tandem::distributed::detail {
namespace {

MPI_Datatype mpi_datatype(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::Float:
      return MPI_FLOAT;
    case ScalarType::Double:
      return MPI_DOUBLE;
    case ScalarType::Long:
      return MPI_INT64_T;
    default:
      break;
  }
  TANDEM_INTERNAL_ASSERT(false, "no MPI datatype for ", dtype, " (checked on enqueue)");
  return MPI_DATATYPE_NULL;
}

// AVG is SUM followed by a division on each rank (see ReduceOp).
MPI_Op mpi_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::SUM:
    case ReduceOp::AVG:
      return MPI_SUM;
    case ReduceOp::PRODUCT:
      return MPI_PROD;
    case ReduceOp::MIN:
      return MPI_MIN;
    case ReduceOp::MAX:
      return MPI_MAX;
  }
  return MPI_OP_NULL;
}

template <typename T>
void divide(const Tensor& t, int size) {
  T* p = t.data_ptr<T>();
  const auto divisor = static_cast<T>(size);
  for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] /= divisor;
}

}  // namespace

int start_collective(CollectiveOp& op, const GroupState& group) {
  if (op.kind == CollectiveKind::kBarrier) return MPI_Ibarrier(group.comm, &op.request);
  const MPI_Datatype type = mpi_datatype(op.dtype);
  switch (op.kind) {
    case CollectiveKind::kAllreduce:
      return MPI_Iallreduce(MPI_IN_PLACE,
                            op.recv.data_ptr(),
                            op.count,
                            type,
                            mpi_op(op.reduce_op),
                            group.comm,
                            &op.request);
    case CollectiveKind::kBroadcast:
      return MPI_Ibcast(
          op.recv.data_ptr(), op.count, type, op.root, group.comm, &op.request);
    case CollectiveKind::kAllgather:
      return MPI_Iallgather(op.send.defined() ? op.send.data_ptr() : MPI_IN_PLACE,
                            op.count,
                            type,
                            op.recv.data_ptr(),
                            op.count,
                            type,
                            group.comm,
                            &op.request);
    case CollectiveKind::kReduceScatter:
      return MPI_Ireduce_scatter_block(op.send.data_ptr(),
                                       op.recv.data_ptr(),
                                       op.count,
                                       type,
                                       mpi_op(op.reduce_op),
                                       group.comm,
                                       &op.request);
    case CollectiveKind::kBarrier:
      break;
  }
  return MPI_SUCCESS;
}

void finish_collective(CollectiveOp& op, const GroupState& group) {
  if (op.nccl) return;
  if (op.reduce_op == ReduceOp::AVG && (op.kind == CollectiveKind::kAllreduce ||
                                        op.kind == CollectiveKind::kReduceScatter)) {
    if (op.dtype == kFloat32) {
      divide<float>(op.recv, group.size);
    } else {
      divide<double>(op.recv, group.size);
    }
  }
  if (!op.unpack_to.empty()) {
    const size_t block = static_cast<size_t>(op.count) * element_size(op.dtype);
    const char* flat = static_cast<const char*>(op.recv.data_ptr());
    for (size_t r = 0; r < op.unpack_to.size(); ++r) {
      if (block > 0) std::memcpy(op.unpack_to[r].data_ptr(), flat + r * block, block);
    }
  }
}

}  // namespace tandem::distributed::detail
