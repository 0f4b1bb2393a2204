// The side channel between the ranks' communication threads: status
// queries (how far has each rank got?), failure notices (my group failed:
// fail yours too) and exit notices (I am leaving after collective #N). Point-to-point,
// non-blocking, on a duplicate of the group's communicator, so it never mixes with the
// collectives and never blocks the comm thread. See Note [Naming the missing rank] in
// comm_loop.cpp. Used by the comm thread only.
#pragma once

#include <mpi.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/state.h"

namespace tandem::distributed::detail {

/// One rank's answer to a status query.
struct PeerStatus {
  bool answered = false;
  bool failed = false;   // its group has failed already
  bool exiting = false;  // it waits for the others at exit
  uint64_t enqueued = 0;
  uint64_t started = 0;
  uint64_t completed = 0;
};

/// A failure notice from another rank.
struct PeerFailure {
  int rank = -1;
  FailureKind kind = FailureKind::kBackend;  // what failed its group
  std::string message;
};

/// An exit notice from another rank: it has called its last collective.
struct PeerExit {
  int rank = -1;
  uint64_t last = 0;  // the sequence number of its last collective
};

class HealthChannel {
 public:
  explicit HealthChannel(GroupState& group);

  /// Posts the receive. False (and the channel stays closed) on MPI errors.
  bool open();
  /// Tests the receive and the sends, answers queries, records replies.
  /// Returns whether anything arrived.
  bool poll();
  /// The first failure notice received and not yet taken.
  std::optional<PeerFailure> take_peer_failure();

  /// Asks every other rank for its PeerStatus; replies to earlier queries
  /// are ignored from now on.
  void start_query();
  /// Every other rank has answered the current query.
  bool query_complete() const;
  /// Indexed by rank (this rank's entry is unused).
  const std::vector<PeerStatus>& replies() const { return replies_; }

  /// Tells every other rank that this group failed with `message`.
  void notify_failure(FailureKind kind, const std::string& message);
  /// Tells every other rank that this rank leaves after collective `last`.
  void notify_exit(uint64_t last);
  /// The rank with the lowest last collective among those that announced
  /// their exit before collective `seq`; nullopt if none did.
  std::optional<PeerExit> exited_before(uint64_t seq) const;

  /// Cancels the receive and completes the sends within `budget`. False if
  /// something stayed pending (then MPI must not be finalized).
  bool close(std::chrono::milliseconds budget);

 private:
  static constexpr int kHeaderWords = 5;
  // Small enough that every message goes eagerly (Open MPI's shared-memory
  // eager limit is 4 KiB), so no send or receive waits on its peer.
  static constexpr size_t kMaxMessage = 2048;

  void send(int dest,
            int tag,
            const std::array<int64_t, kHeaderWords>& header,
            const std::string& text = {});
  void dispatch(int source, int tag, int bytes);
  void test_sends();

  struct PendingSend {
    std::unique_ptr<std::vector<char>> buffer;
    MPI_Request request = MPI_REQUEST_NULL;
  };

  GroupState& group_;
  bool open_ = false;
  std::vector<char> recv_buffer_;
  MPI_Request recv_request_ = MPI_REQUEST_NULL;
  std::vector<PendingSend> sends_;
  int64_t query_id_ = 0;
  std::vector<PeerStatus> replies_;
  std::optional<PeerFailure> peer_failure_;
  /// Of the ranks that announced their exit, the one whose last collective
  /// is the lowest: any collective past it waits for that rank too.
  std::optional<PeerExit> earliest_exit_;
};

}  // namespace tandem::distributed::detail
