// The last collectives of a process group, kept for the hang report: what
// each rank was doing when a collective timed out (PyTorch's flight
// recorder, Horovod's stall report). See Note [The hang report] in
// flight_recorder.cpp. Private to src/distributed/.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace tandem::distributed::detail {

class FlightRecorder {
 public:
  using Clock = std::chrono::steady_clock;
  /// How many collectives the report goes back.
  static constexpr size_t kDepth = 16;

  /// Collective `seq` was called (queued by the application).
  void called(uint64_t seq, const std::string& description, Clock::time_point at);
  /// The comm thread handed `seq` to MPI or NCCL.
  void started(uint64_t seq, Clock::time_point at);
  /// `seq` completed (`failed`: with an error).
  void finished(uint64_t seq, Clock::time_point at, bool failed);

  /// "  allreduce #3 (sum, 4 float32 elements): completed in 1.2 ms\n ..."
  /// for the recorded collectives, oldest first, with times measured back
  /// from `now`; "" if none was called.
  std::string report(Clock::time_point now) const;

 private:
  struct Entry {
    uint64_t seq = 0;  // 0: unused
    std::string description;
    Clock::time_point called;
    Clock::time_point started;
    Clock::time_point finished;
    bool has_started = false;
    bool has_finished = false;
    bool failed = false;
  };
  Entry* find(uint64_t seq);

  mutable std::mutex mu_;
  std::array<Entry, kDepth> entries_;  // entry of seq at seq % kDepth
};

}  // namespace tandem::distributed::detail
