#include "distributed/state.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <utility>

#include "distributed/runtime.h"
#include "tandem/core/error.h"
#include "tandem/distributed/errors.h"

namespace tandem::distributed::detail {

std::string format_duration(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms < 1000) return detail::str(ms, " ms");
  if (ms % 1000 == 0) return detail::str(ms / 1000, " s");
  std::ostringstream out;
  out << std::fixed << std::setprecision(3) << static_cast<double>(ms) / 1000.0;
  std::string s = out.str();
  s.erase(s.find_last_not_of('0') + 1);
  return s + " s";
}

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) {
    // Open MPI's libnbc can return internal codes that have no string; it
    // prints its own diagnostic ("NBC_Progress: an error ...") to stderr.
    return detail::str(
        "MPI error code ", code, " (no description; see MPI's output above)");
  }
  return std::string(text, static_cast<size_t>(length));
}

// ---- GroupState ----

std::string GroupState::where() const { return detail::str("rank ", rank, " of ", size); }

bool GroupState::fail(FailureKind kind, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (failed_.load(std::memory_order_relaxed)) return false;
  kind_ = kind;
  message_ = message;
  failed_.store(true, std::memory_order_release);
  return true;
}

std::string GroupState::failure_message() const {
  std::lock_guard<std::mutex> lock(mu_);
  return message_;
}

FailureKind GroupState::failure_kind() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kind_;
}

std::exception_ptr GroupState::make_error(const std::string& message) const {
  switch (failure_kind()) {
    case FailureKind::kTimeout:
      return std::make_exception_ptr(CollectiveTimeoutError(message));
    case FailureKind::kPeer:
      return std::make_exception_ptr(PeerFailureError(message));
    case FailureKind::kMismatch:
      return std::make_exception_ptr(CollectiveMismatchError(message));
    case FailureKind::kBackend:
      break;
  }
  return std::make_exception_ptr(DistributedError(message));
}

std::exception_ptr GroupState::error() const {
  if (!failed()) return nullptr;
  return make_error(failure_message());
}

// ---- WorkState ----

WorkState::WorkState(std::shared_ptr<GroupState> group,
                     uint64_t seq,
                     std::string description,
                     std::vector<Tensor> outputs,
                     Clock::time_point enqueued,
                     std::chrono::milliseconds timeout)
    : group(std::move(group)),
      seq(seq),
      description(std::move(description)),
      outputs(std::move(outputs)),
      enqueued(enqueued),
      deadline_((enqueued + timeout).time_since_epoch().count()) {}

void WorkState::lower_deadline(Clock::time_point t) {
  Clock::rep want = t.time_since_epoch().count();
  Clock::rep have = deadline_.load(std::memory_order_acquire);
  while (want < have && !deadline_.compare_exchange_weak(have, want)) {
  }
}

bool WorkState::finish(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (done_) return false;
    done_ = true;
    error_ = std::move(error);
  }
  cv_.notify_all();
  return true;
}

bool WorkState::is_completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

std::exception_ptr WorkState::exception() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// The comm thread finishes every collective by its deadline (plus the
// status query). The waiter only steps in if that thread itself is stuck
// (inside an MPI call that does not return): then it fails the collective
// and the group on its own, so that no wait() is ever unbounded.
void WorkState::wait(std::optional<std::chrono::milliseconds> timeout) {
  if (timeout) {
    TANDEM_CHECK(timeout->count() >= 0,
                 "wait: the timeout must not be negative, got ",
                 format_duration(*timeout));
    lower_deadline(Clock::now() + *timeout);
    Runtime::instance().wake();
  }
  std::unique_lock<std::mutex> lock(mu_);
  std::optional<Clock::time_point> failed_since;
  while (!done_) {
    const auto now = Clock::now();
    auto give_up = deadline() + kStatusQueryBudget + kCommThreadGrace;
    if (group->failed()) {
      if (!failed_since) failed_since = now;
      give_up = std::min(give_up, *failed_since + kCommThreadGrace);
    }
    if (now >= give_up) {
      lock.unlock();
      const std::string mine = detail::str(
          description,
          " timed out after ",
          format_duration(std::chrono::duration_cast<std::chrono::milliseconds>(
              deadline() - enqueued)),
          " on ",
          group->where(),
          "; the communication thread did not report on it within ",
          format_duration(kStatusQueryBudget + kCommThreadGrace),
          " after the deadline (stuck inside MPI?)");
      const bool first = group->fail(FailureKind::kTimeout, mine);
      finish(group->make_error(first ? mine
                                     : detail::str(description,
                                                   " failed on ",
                                                   group->where(),
                                                   " because the process group failed: ",
                                                   group->failure_message())));
      lock.lock();
      break;
    }
    cv_.wait_until(lock, std::min(give_up, now + std::chrono::milliseconds(100)));
  }
  if (error_) std::rethrow_exception(error_);
}

}  // namespace tandem::distributed::detail
