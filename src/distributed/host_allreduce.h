// Private: an allreduce (SUM) of tensors that live in a HostWindow, done by
// the ranks' communication threads in shared memory instead of by MPI. See
// Note [Reducing on the host] in host_allreduce.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "distributed/host_window.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"
#include "tandem/distributed/work.h"

namespace tandem::distributed::detail {

/// This rank's part of a reduction's adding: `rows` of `total`. A rank with
/// less than an even part adds at most ceil(rows / total) of the chunks; any
/// other rank (and any rank when total is 0) as many as it can claim.
struct Part {
  int64_t rows = 0;
  int64_t total = 0;
};

/// One pass of a channel's reduction, as one rank's comm thread drives it.
class HostAllreduce {
 public:
  HostAllreduce(std::shared_ptr<HostWindow> window,
                size_t channel,
                uint64_t pass,
                size_t offset,
                int64_t count,
                ScalarType dtype,
                Part part);

  /// This rank's tensor is ready to be read and written by any rank.
  void arrive();
  /// Every rank has arrived, some chunk is still unclaimed, and this rank
  /// has not added its part yet.
  bool claimable() const;
  /// Sums one unclaimed chunk, if there is one; returns whether it did.
  bool work();
  /// Every chunk is summed into every rank's tensor.
  bool done() const;
  /// This rank's doorbell in the window (HostWindow::Bell).
  HostWindow::Bell& bell() const { return window_->bell(window_->rank()); }

 private:
  std::shared_ptr<HostWindow> window_;
  HostWindow::Channel& channel_;
  uint64_t pass_;  // 1 for the channel's first reduction
  size_t offset_;
  int64_t count_;
  ScalarType dtype_;
  uint64_t chunks_;
  uint64_t max_claims_;  // chunks this rank may add
  uint64_t claims_ = 0;  // chunks it added
};

/// Queues the SUM allreduce of `tensor`, which window.tensor() made at
/// `offset`, over channel `channel` of the window; this rank adds at most
/// `part` of it (the ranks' parts must cover their rows' total). Every rank must call it
/// for the same channel, offset and size, in the same order as its other
/// collectives; it is numbered, timed out and failed as they are.
Work allreduce_on_host(ProcessGroup& group,
                       const std::shared_ptr<HostWindow>& window,
                       size_t channel,
                       size_t offset,
                       const Tensor& tensor,
                       const std::string& label,
                       Part part = {});

}  // namespace tandem::distributed::detail
