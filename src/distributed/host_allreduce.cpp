#include "distributed/host_allreduce.h"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include "distributed/runtime.h"
#include "distributed/state.h"
#include "tandem/core/error.h"

namespace tandem::distributed::detail {

// Note [Reducing on the host]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~
// When every rank of a group runs on one host, DDP's buckets live in a
// HostWindow: shared memory that each rank maps, with a region per rank at
// the same offsets. MPI's allreduce would copy each rank's bucket into
// shared buffers and back, and each rank would add its part, at its own
// speed. Here nothing is copied: a bucket is cut into chunks of kChunkBytes,
// and whichever comm thread is free claims the next chunk, adds that chunk
// of every rank's bucket, in rank order (r0 + r1 + r2 ..., the order one
// process adds its devices' gradients in), and writes the sum into every
// rank's bucket. A fast rank whose backward ended first does most of the
// adding, and no rank spends its time copying. With uneven shares (the
// cut follows the ranks' speeds, rank_balance.h) a rank with less than an
// even part of the rows adds at most its rows' share of the chunks, so a
// rank given few rows for being slow also adds little (its CPU time, under
// a quota say, goes to its backward), and the faster ranks take the rest.
//
// The protocol, per channel (one per bucket), with counters in the window
// that only grow, so that nothing is ever reset between passes: in its
// p-th reduction of a channel (every rank counts its own, and they agree:
// every rank reduces every bucket once per pass), a rank
//   1. arrives (arrived += 1, release) once its bucket holds its gradients;
//   2. once arrived reaches p * ranks (acquire: every rank's gradients are
//      visible), claims chunks by moving claimed from t to t + 1 while
//      t < p * chunks (chunk t - (p - 1) * chunks), never past the pass's
//      last, so the next pass's tickets start where this one's ended;
//   3. after writing a chunk's sum everywhere, counts it (done += 1,
//      release); the reduction is complete when done reaches p * chunks.
// A rank can only be in pass p + 1 once pass p is complete everywhere
// (done counts every chunk, and a chunk is counted after its last read),
// so a rank writing next pass's gradients never races a reader of this one.
// The comm thread drives it as any collective: numbered, with a deadline,
// and named in a timeout by the status query ("rank 1 has not called it
// yet"); a rank that dies leaves the others to that deadline (mpirun ends
// the job before). The sum's bits do not depend on which rank adds a chunk.
// A comm thread with nothing to add sleeps on its rank's doorbell (a futex
// in the window), which the others ring when they arrive and when they add
// a pass's last chunk, and its own process when it queues a collective.
namespace {

constexpr size_t kChunkBytes = 128 << 10;

// Adds the `n` elements at byte `at` of every rank's region, in rank order,
// into every rank's region.
template <typename T>
void sum_chunk(const HostWindow& window, size_t at, size_t n) {
  std::vector<T*> parts;
  for (int r = 0; r < window.ranks(); ++r) {
    parts.push_back(reinterpret_cast<T*>(window.region(r) + at));
  }
  if (parts.size() == 2) {
    T* __restrict a = parts[0];
    T* __restrict b = parts[1];
    for (size_t i = 0; i < n; ++i) {
      const T s = a[i] + b[i];
      a[i] = s;
      b[i] = s;
    }
    return;
  }
  T* __restrict out = parts[0];
  for (size_t r = 1; r < parts.size(); ++r) {
    const T* __restrict in = parts[r];
    for (size_t i = 0; i < n; ++i) out[i] += in[i];
  }
  for (size_t r = 1; r < parts.size(); ++r) std::memcpy(parts[r], out, n * sizeof(T));
}

}  // namespace

HostAllreduce::HostAllreduce(std::shared_ptr<HostWindow> window,
                             size_t channel,
                             uint64_t pass,
                             size_t offset,
                             int64_t count,
                             ScalarType dtype,
                             Part part)
    : window_(std::move(window)),
      channel_(window_->channel(channel)),
      pass_(pass),
      offset_(offset),
      count_(count),
      dtype_(dtype) {
  const size_t per_chunk = kChunkBytes / element_size(dtype_);
  chunks_ = (static_cast<size_t>(count_) + per_chunk - 1) / per_chunk;
  // A rank with less than an even part adds at most ceil(rows * chunks /
  // total) chunks; the others take whatever is left (there is always one:
  // some rank has at least an even part).
  const bool small = part.total > 0 && part.rows * window_->ranks() < part.total;
  max_claims_ = small ? (static_cast<uint64_t>(part.rows) * chunks_ +
                         static_cast<uint64_t>(part.total) - 1) /
                            static_cast<uint64_t>(part.total)
                      : chunks_;
}

void HostAllreduce::arrive() {
  channel_.arrived.fetch_add(1, std::memory_order_release);
  window_->ring_others();
}

bool HostAllreduce::claimable() const {
  return claims_ < max_claims_ &&
         channel_.arrived.load(std::memory_order_acquire) >=
             pass_ * static_cast<uint64_t>(window_->ranks()) &&
         channel_.claimed.load(std::memory_order_relaxed) < pass_ * chunks_;
}

bool HostAllreduce::work() {
  if (!claimable()) return false;
  uint64_t ticket = channel_.claimed.load(std::memory_order_relaxed);
  do {
    if (ticket >= pass_ * chunks_) return false;
  } while (!channel_.claimed.compare_exchange_weak(
      ticket, ticket + 1, std::memory_order_acq_rel));
  ++claims_;
  const size_t chunk = ticket - (pass_ - 1) * chunks_;
  const size_t element = element_size(dtype_);
  const size_t per_chunk = kChunkBytes / element;
  const size_t first = chunk * per_chunk;
  const size_t n = std::min(per_chunk, static_cast<size_t>(count_) - first);
  const size_t at = offset_ + first * element;
  switch (dtype_) {
    case ScalarType::Float:
      sum_chunk<float>(*window_, at, n);
      break;
    case ScalarType::Double:
      sum_chunk<double>(*window_, at, n);
      break;
    case ScalarType::Long:
      sum_chunk<int64_t>(*window_, at, n);
      break;
    default:
      TANDEM_INTERNAL_ASSERT(false, "host allreduce of ", dtype_);
  }
  if (channel_.done.fetch_add(1, std::memory_order_release) + 1 == pass_ * chunks_) {
    window_->ring_others();  // whoever waits for the sum
  }
  return true;
}

bool HostAllreduce::done() const {
  return channel_.done.load(std::memory_order_acquire) >= pass_ * chunks_;
}

Work allreduce_on_host(ProcessGroup& group,
                       const std::shared_ptr<HostWindow>& window,
                       size_t channel,
                       size_t offset,
                       const Tensor& tensor,
                       const std::string& label,
                       Part part) {
  TANDEM_INTERNAL_ASSERT(
      tensor.is_cpu() && tensor.is_contiguous() &&
          tensor.data_ptr() ==
              static_cast<void*>(window->region(window->rank()) + offset),
      "allreduce_on_host: the tensor is not the window's at offset ",
      offset);
  auto op = std::make_unique<CollectiveOp>();
  op->kind = CollectiveKind::kAllreduce;
  op->reduce_op = ReduceOp::SUM;
  op->dtype = tensor.dtype();
  op->count = static_cast<int>(tensor.numel());
  op->recv = tensor;
  op->host = std::make_shared<HostAllreduce>(window,
                                             channel,
                                             window->next_pass(channel),
                                             offset,
                                             tensor.numel(),
                                             tensor.dtype(),
                                             part);
  op->span_name = str("allreduce ", label, " (shared memory)");
  tensor.bump_version();
  return Runtime::instance().enqueue(group_state(group),
                                     std::move(op),
                                     "allreduce",
                                     str(" (sum, ",
                                         tensor.numel(),
                                         " ",
                                         tensor.dtype(),
                                         " elements, ",
                                         label,
                                         ", in shared memory)"),
                                     std::nullopt);
}

}  // namespace tandem::distributed::detail
