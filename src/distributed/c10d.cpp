#include "tandem/distributed/c10d.h"

#include <numeric>
#include <utility>

#include "tandem/core/error.h"

namespace tandem::c10d {
namespace {

// See Note [One tensor per c10d call].
void check_one_tensor(const char* call, const char* what, size_t count) {
  TANDEM_CHECK(count == 1,
               call,
               ": expected exactly one tensor in ",
               what,
               " (tandem's c10d, like LibTorch's MPI backend, takes one per call), got ",
               count);
}

template <typename TandemOptions>
TandemOptions with_timeout(TandemOptions options, std::chrono::milliseconds timeout) {
  if (timeout != kUnsetTimeout) options.timeout(timeout);
  return options;
}

std::shared_ptr<Work> started(distributed::Work work) {
  return std::make_shared<Work>(std::move(work));
}

}  // namespace

bool Work::wait(std::chrono::milliseconds timeout) {
  if (timeout == kNoTimeout) {
    work_.wait();
  } else {
    work_.wait(timeout);
  }
  return true;
}

ProcessGroup::ProcessGroup(std::shared_ptr<distributed::ProcessGroup> group)
    : group_(std::move(group)) {
  TANDEM_CHECK(group_ != nullptr, "c10d::ProcessGroup: the group is null");
}

std::shared_ptr<Work> ProcessGroup::allreduce(std::vector<Tensor>& tensors,
                                              const AllreduceOptions& opts) {
  check_one_tensor("ProcessGroup::allreduce", "tensors", tensors.size());
  return started(group_->allreduce(
      tensors[0],
      with_timeout(distributed::AllreduceOptions().reduce_op(opts.reduceOp),
                   opts.timeout)));
}

std::shared_ptr<Work> ProcessGroup::broadcast(std::vector<Tensor>& tensors,
                                              const BroadcastOptions& opts) {
  check_one_tensor("ProcessGroup::broadcast", "tensors", tensors.size());
  TANDEM_CHECK(opts.rootTensor == 0,
               "ProcessGroup::broadcast: rootTensor ",
               opts.rootTensor,
               " is out of range for a call of one tensor");
  TANDEM_CHECK(opts.rootRank >= 0 && opts.rootRank < getSize(),
               "ProcessGroup::broadcast: rootRank ",
               opts.rootRank,
               " is out of range for a group of size ",
               getSize());
  return started(group_->broadcast(tensors[0],
                                   with_timeout(distributed::BroadcastOptions().root_rank(
                                                    static_cast<int>(opts.rootRank)),
                                                opts.timeout)));
}

std::shared_ptr<Work> ProcessGroup::allgather(
    std::vector<std::vector<Tensor>>& outputTensors,
    std::vector<Tensor>& inputTensors,
    const AllgatherOptions& opts) {
  check_one_tensor("ProcessGroup::allgather", "inputTensors", inputTensors.size());
  TANDEM_CHECK(outputTensors.size() == 1,
               "ProcessGroup::allgather: expected exactly one list in outputTensors "
               "(one list of getSize() tensors), got ",
               outputTensors.size());
  return started(
      group_->allgather(outputTensors[0],
                        inputTensors[0],
                        with_timeout(distributed::AllgatherOptions(), opts.timeout)));
}

std::shared_ptr<Work> ProcessGroup::barrier(const BarrierOptions& opts) {
  return started(
      group_->barrier(with_timeout(distributed::BarrierOptions(), opts.timeout)));
}

std::shared_ptr<ProcessGroupMPI> ProcessGroupMPI::createProcessGroupMPI(
    const std::vector<int>& ranks) {
  auto group = distributed::is_initialized() ? distributed::ProcessGroup::world()
                                             : distributed::init_process_group();
  std::vector<int> every_rank(static_cast<size_t>(group->size()));
  std::iota(every_rank.begin(), every_rank.end(), 0);
  TANDEM_CHECK(ranks.empty() || ranks == every_rank,
               "ProcessGroupMPI::createProcessGroupMPI: subgroups are not supported; "
               "ranks must be empty or list every rank 0..",
               group->size() - 1,
               " in order");
  return std::make_shared<ProcessGroupMPI>(std::move(group));
}

}  // namespace tandem::c10d
