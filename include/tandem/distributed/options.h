// Reduction operators and per-call options for ProcessGroup's collectives,
// with c10d's names (ReduceOp::SUM, AllreduceOptions, BroadcastOptions, ...)
// and LibTorch's chainable setters.
//
// Every collective has a deadline: the group's timeout (default 5 minutes,
// see ProcessGroupOptions) unless the call sets its own.
//
//   namespace dist = tandem::distributed;
//   pg->allreduce(grads, dist::AllreduceOptions().reduce_op(dist::ReduceOp::AVG));
//   pg->broadcast(params, dist::BroadcastOptions().root_rank(0).timeout(30s));
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace tandem::distributed {

/// How allreduce and reduce_scatter combine the ranks' values, elementwise.
/// AVG is SUM followed by a division by the group size (x / size, one
/// rounding after the sum; floating-point tensors only). PyTorch's DDP
/// pre-multiplies by 1 / size instead; the two can differ in the last bit
/// when the size is not a power of two.
enum class ReduceOp { SUM, AVG, PRODUCT, MIN, MAX };

/// "sum", "avg", "product", "min", "max".
std::string_view reduce_op_name(ReduceOp op);
std::ostream& operator<<(std::ostream& out, ReduceOp op);

/// PyTorch's default for non-NCCL groups is 30 minutes and NCCL's 10; a
/// collective that has not finished in 5 minutes is almost always a hang.
inline constexpr std::chrono::milliseconds kDefaultTimeout = std::chrono::minutes(5);

class AllreduceOptions {
 public:
  AllreduceOptions& reduce_op(ReduceOp value) {
    reduce_op_ = value;
    return *this;
  }
  /// Overrides the group's timeout for this call.
  AllreduceOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  /// What the call is for, in its errors and the hang report:
  /// "allreduce #7 (sum, 1024 float32 elements, bucket 2 of 5)".
  AllreduceOptions& label(std::string value) {
    label_ = std::move(value);
    return *this;
  }
  ReduceOp reduce_op() const { return reduce_op_; }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }
  const std::string& label() const { return label_; }

 private:
  ReduceOp reduce_op_ = ReduceOp::SUM;
  std::optional<std::chrono::milliseconds> timeout_;
  std::string label_;
};

class BroadcastOptions {
 public:
  /// The rank whose tensor every rank receives (default 0).
  BroadcastOptions& root_rank(int value) {
    root_rank_ = value;
    return *this;
  }
  BroadcastOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  int root_rank() const { return root_rank_; }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }

 private:
  int root_rank_ = 0;
  std::optional<std::chrono::milliseconds> timeout_;
};

class AllgatherOptions {
 public:
  AllgatherOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }

 private:
  std::optional<std::chrono::milliseconds> timeout_;
};

class ReduceScatterOptions {
 public:
  ReduceScatterOptions& reduce_op(ReduceOp value) {
    reduce_op_ = value;
    return *this;
  }
  ReduceScatterOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  ReduceOp reduce_op() const { return reduce_op_; }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }

 private:
  ReduceOp reduce_op_ = ReduceOp::SUM;
  std::optional<std::chrono::milliseconds> timeout_;
};

class BarrierOptions {
 public:
  BarrierOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }

 private:
  std::optional<std::chrono::milliseconds> timeout_;
};

/// Options of init_process_group().
class ProcessGroupOptions {
 public:
  /// The default deadline of every collective of the group. Unset: the
  /// environment variable TANDEM_DISTRIBUTED_TIMEOUT (seconds, e.g. "300" or
  /// "2.5") if present, else kDefaultTimeout.
  ProcessGroupOptions& timeout(std::chrono::milliseconds value) {
    timeout_ = value;
    return *this;
  }
  std::optional<std::chrono::milliseconds> timeout() const { return timeout_; }

 private:
  std::optional<std::chrono::milliseconds> timeout_;
};

}  // namespace tandem::distributed
