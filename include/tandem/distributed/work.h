// Work: the handle of one collective in flight, as c10d's Work.
//
// A ProcessGroup call only validates its arguments and queues the
// collective; it returns at once with a Work. The collective runs on the
// group's communication thread; its tensors must not be read or written
// until wait() returns (or is_completed() is true). A Work is a cheap shared
// handle: copy it, wait on it from any thread, drop it without waiting (the
// collective still runs; a failure still poisons the group).
//
//   std::vector<tandem::distributed::Work> pending;
//   for (auto& bucket : buckets) pending.push_back(pg->allreduce(bucket));
//   for (auto& w : pending) w.wait();  // throws the first failure
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::distributed {

namespace detail {
class WorkState;
}  // namespace detail

class Work {
 public:
  /// An undefined handle (defined() is false).
  Work() = default;
  /// A handle that is complete already, with `result` as its result: for
  /// code that returns a Work without communicating (a communication hook
  /// that keeps the local gradients, say).
  static Work completed(std::vector<Tensor> result,
                        std::string description = "completed");
  explicit Work(std::shared_ptr<detail::WorkState> state);

  bool defined() const { return state_ != nullptr; }

  /// Finished, successfully or not.
  bool is_completed() const;
  /// Finished without error.
  bool is_success() const;
  /// The failure once finished with one, else null.
  std::exception_ptr exception() const;

  /// Blocks until the collective has finished and rethrows its failure
  /// (DistributedError or a subclass). Never blocks forever: the collective
  /// fails at its deadline.
  void wait() const;
  /// As wait(), but fails with CollectiveTimeoutError if the collective has
  /// not finished within `timeout` (when that is sooner than its deadline).
  /// A collective cannot be cancelled, so this, like any timeout, makes the
  /// group unusable: see Note [Failure is final] in process_group.h.
  void wait(std::chrono::milliseconds timeout) const;

  /// The tensors the collective writes (allreduce, broadcast: the tensor;
  /// allgather: the outputs; reduce_scatter: the output; barrier: none).
  const std::vector<Tensor>& result() const;
  /// The collective's number in its group: 1 for the first, and equal on
  /// every rank for the same call, since calls must come in the same order.
  uint64_t sequence_number() const;
  /// E.g. "allreduce #12 (sum, 1863690 float32 elements)".
  const std::string& description() const;

 private:
  const detail::WorkState& state() const;
  std::shared_ptr<detail::WorkState> state_;
};

}  // namespace tandem::distributed
