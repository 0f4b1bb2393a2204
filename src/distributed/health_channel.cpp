#include "distributed/health_channel.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

namespace tandem::distributed::detail {
namespace {

// Message tags; every message starts with kHeaderWords int64 words:
//   query:   {query id, 0, 0, 0, 0}
//   status:  {query id, enqueued, started, completed, flags}
//   failure: {0, kind, 0, 0, 0} followed by the failure's text
//   exit:    {0, last collective, 0, 0, 0}
constexpr int kTagQuery = 1;
constexpr int kTagStatus = 2;
constexpr int kTagFailure = 3;
constexpr int kTagExit = 4;
constexpr int64_t kFlagFailed = 1;
constexpr int64_t kFlagExiting = 2;

}  // namespace

HealthChannel::HealthChannel(GroupState& group)
    : group_(group),
      recv_buffer_(kMaxMessage + kHeaderWords * sizeof(int64_t)),
      replies_(static_cast<size_t>(group.size)) {}

bool HealthChannel::open() {
  open_ = MPI_Irecv(recv_buffer_.data(),
                    static_cast<int>(recv_buffer_.size()),
                    MPI_BYTE,
                    MPI_ANY_SOURCE,
                    MPI_ANY_TAG,
                    group_.health,
                    &recv_request_) == MPI_SUCCESS;
  return open_;
}

bool HealthChannel::poll() {
  if (!open_) return false;
  bool arrived = false;
  // A few messages per poll at most, so collectives are not starved.
  for (int i = 0; i < 8; ++i) {
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&recv_request_, &done, &status) != MPI_SUCCESS) {
      open_ = false;  // the channel is broken; collectives still have deadlines
      return arrived;
    }
    if (!done) break;
    arrived = true;
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    dispatch(status.MPI_SOURCE, status.MPI_TAG, bytes);
    if (!open()) return arrived;
  }
  test_sends();
  return arrived;
}

// A send that fails (its peer is gone) is dropped: a notice is best
// effort. Its buffer is leaked on purpose, since MPI may still hold it.
void HealthChannel::test_sends() {
  for (auto& s : sends_) {
    int done = 0;
    if (MPI_Test(&s.request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      static_cast<void>(s.buffer.release());
      s.request = MPI_REQUEST_NULL;
    }
  }
  std::erase_if(sends_,
                [](const PendingSend& s) { return s.request == MPI_REQUEST_NULL; });
}

void HealthChannel::dispatch(int source, int tag, int bytes) {
  if (bytes < static_cast<int>(kHeaderWords * sizeof(int64_t))) return;
  if (source < 0 || source >= group_.size) return;
  std::array<int64_t, kHeaderWords> header{};
  std::memcpy(header.data(), recv_buffer_.data(), sizeof(header));
  switch (tag) {
    case kTagQuery:
      send(source,
           kTagStatus,
           {header[0],
            static_cast<int64_t>(group_.enqueued.load()),
            static_cast<int64_t>(group_.started.load()),
            static_cast<int64_t>(group_.completed.load()),
            (group_.failed() ? kFlagFailed : 0) |
                (group_.exiting.load() ? kFlagExiting : 0)});
      break;
    case kTagStatus:
      if (header[0] == query_id_) {
        PeerStatus& s = replies_[static_cast<size_t>(source)];
        s.answered = true;
        s.enqueued = static_cast<uint64_t>(header[1]);
        s.started = static_cast<uint64_t>(header[2]);
        s.completed = static_cast<uint64_t>(header[3]);
        s.failed = (header[4] & kFlagFailed) != 0;
        s.exiting = (header[4] & kFlagExiting) != 0;
      }
      break;
    case kTagFailure:
      if (!peer_failure_) {
        const char* text = recv_buffer_.data() + sizeof(header);
        const auto kind = header[1] == static_cast<int64_t>(FailureKind::kTimeout)
                              ? FailureKind::kTimeout
                              : FailureKind::kBackend;
        peer_failure_ = PeerFailure{
            source, kind, std::string(text, static_cast<size_t>(bytes) - sizeof(header))};
      }
      break;
    case kTagExit:
      if (const auto last = static_cast<uint64_t>(header[1]);
          !earliest_exit_ || last < earliest_exit_->last) {
        earliest_exit_ = PeerExit{source, last};
      }
      break;
    default:
      break;
  }
}

std::optional<PeerFailure> HealthChannel::take_peer_failure() {
  return std::exchange(peer_failure_, std::nullopt);
}

void HealthChannel::send(int dest,
                         int tag,
                         const std::array<int64_t, kHeaderWords>& header,
                         const std::string& text) {
  if (!open_) return;
  const size_t length = std::min(text.size(), kMaxMessage);
  auto buffer = std::make_unique<std::vector<char>>(sizeof(header) + length);
  std::memcpy(buffer->data(), header.data(), sizeof(header));
  if (length > 0) std::memcpy(buffer->data() + sizeof(header), text.data(), length);
  PendingSend s;
  if (MPI_Isend(buffer->data(),
                static_cast<int>(buffer->size()),
                MPI_BYTE,
                dest,
                tag,
                group_.health,
                &s.request) != MPI_SUCCESS) {
    return;
  }
  s.buffer = std::move(buffer);
  sends_.push_back(std::move(s));
}

void HealthChannel::start_query() {
  ++query_id_;
  std::fill(replies_.begin(), replies_.end(), PeerStatus{});
  for (int r = 0; r < group_.size; ++r) {
    if (r != group_.rank) send(r, kTagQuery, {query_id_, 0, 0, 0, 0});
  }
}

bool HealthChannel::query_complete() const {
  for (int r = 0; r < group_.size; ++r) {
    if (r != group_.rank && !replies_[static_cast<size_t>(r)].answered) return false;
  }
  return true;
}

void HealthChannel::notify_failure(FailureKind kind, const std::string& message) {
  for (int r = 0; r < group_.size; ++r) {
    if (r != group_.rank) {
      send(r, kTagFailure, {0, static_cast<int64_t>(kind), 0, 0, 0}, message);
    }
  }
}

void HealthChannel::notify_exit(uint64_t last) {
  for (int r = 0; r < group_.size; ++r) {
    if (r != group_.rank) send(r, kTagExit, {0, static_cast<int64_t>(last), 0, 0, 0});
  }
}

std::optional<PeerExit> HealthChannel::exited_before(uint64_t seq) const {
  if (earliest_exit_ && earliest_exit_->last < seq) return earliest_exit_;
  return std::nullopt;
}

bool HealthChannel::close(std::chrono::milliseconds budget) {
  if (!open_) return sends_.empty();
  open_ = false;
  MPI_Cancel(&recv_request_);
  MPI_Wait(&recv_request_,
           MPI_STATUS_IGNORE);  // returns at once: receives are eager-sized
  const auto give_up = Clock::now() + budget;
  test_sends();
  while (!sends_.empty() && Clock::now() < give_up) {
    std::this_thread::yield();
    test_sends();
  }
  return sends_.empty();
}

}  // namespace tandem::distributed::detail
