// Private: memory that every rank of a group on one host maps, so that a
// collective over it needs no copies. See Note [Reducing on the host] in
// host_allreduce.cpp, which is what it is for.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed::detail {

/// One shared-memory segment: a region of the same size for every rank,
/// and `channels` sets of counters that the ranks' collectives over the
/// regions synchronize on (one channel per buffer reduced on its own).
class HostWindow {
 public:
  /// Per channel, each counter on a cache line of its own; they only grow
  /// (Note [Reducing on the host]).
  struct Channel {
    alignas(64) std::atomic<uint64_t> arrived{0};
    alignas(64) std::atomic<uint64_t> claimed{0};
    alignas(64) std::atomic<uint64_t> done{0};
  };
  /// A rank's doorbell: its comm thread sleeps on it (a futex) while it
  /// waits for the other ranks; they ring it when they arrive or finish.
  struct Bell {
    alignas(64) std::atomic<uint32_t> rings{0};
  };

  /// Collective over `group`: maps one segment with `region_bytes` for each
  /// rank. Null on every rank when any rank cannot map it or does not want
  /// it: the ranks are on several hosts, shared memory is short,
  /// TANDEM_SHARED_MEMORY=0 is set on some rank, some rank passed `wanted`
  /// false, or the group has one rank. The segment's name is removed before
  /// this returns, so nothing is left behind however the job ends.
  static std::shared_ptr<HostWindow> create(ProcessGroup& group,
                                            size_t region_bytes,
                                            size_t channels,
                                            bool wanted);

  ~HostWindow();
  HostWindow(const HostWindow&) = delete;
  HostWindow& operator=(const HostWindow&) = delete;

  int rank() const { return rank_; }
  int ranks() const { return ranks_; }
  size_t channels() const { return channels_; }
  size_t region_bytes() const { return region_bytes_; }
  /// The start of rank `r`'s region, as this process sees it.
  std::byte* region(int r) const;
  Channel& channel(size_t c) const;
  Bell& bell(int r) const;
  /// Rings every other rank's bell.
  void ring_others() const;
  /// Wakes whoever sleeps on `bell`.
  static void ring(Bell& bell);
  /// Sleeps until `bell` rings after it read `seen`, or `timeout` passes.
  static void wait(Bell& bell, uint32_t seen, std::chrono::microseconds timeout);
  /// This rank's next reduction over channel `c`: 1, 2, ... (every rank
  /// reduces every channel equally often, so they agree on the number).
  uint64_t next_pass(size_t c) { return ++passes_.at(c); }
  /// A flat tensor on `device` (a CPU device) over this rank's region at
  /// byte `offset` (a multiple of the dtype's size); it keeps the window
  /// mapped.
  Tensor tensor(size_t offset, int64_t numel, ScalarType dtype, Device device);

 private:
  HostWindow(int rank,
             int ranks,
             size_t region_bytes,
             size_t channels,
             void* base,
             size_t bytes);

  int rank_;
  int ranks_;
  size_t region_bytes_;
  size_t channels_;
  size_t header_;  // the counters and the bells, before the regions
  std::byte* base_;
  size_t bytes_;
  std::vector<uint64_t> passes_;
  std::weak_ptr<HostWindow> self_;
};

}  // namespace tandem::distributed::detail
