// The communication thread's side of failure: deadlines, the message that
// names the missing rank, poisoning the group and telling the others, and
// the hang report. The rest of the loop is in comm_loop.cpp.
#include <cstdio>
#include <string>
#include <vector>

#include "distributed/comm_loop.h"
#include "tandem/core/error.h"

namespace tandem::distributed::detail {

// Note [Naming the missing rank]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A collective that times out cannot say which rank is missing: MPI only
// reports "not done". So each rank's comm thread also serves a side channel
// (health_channel.h), and when a collective misses its deadline this thread
// asks every other rank's comm thread how many collectives its application
// has called, and how many it has started and completed, waiting at most
// kStatusQueryBudget. Comm threads answer even while their application
// sleeps or computes, so:
//   - a rank whose count is below the collective's number has not called it
//     yet: "rank 1 has not called it yet (its last collective is #11)";
//   - a rank that does not answer has exited, was killed, or is stuck
//     inside MPI: "rank 2 did not answer a status query within 1 s";
//   - if every rank has started it, the ranks disagree about what it is
//     (order, sizes): MPI cannot match it.
// Then the group fails and this rank sends its message to every other rank
// (a failure notice), whose groups fail at once with PeerFailureError
// instead of at their own deadlines.

void CommLoop::check_deadlines() {
  if (group_->failed()) {
    timing_out_ = nullptr;
    return;
  }
  const auto now = Clock::now();
  if (timing_out_ == nullptr) {
    for (auto& op : active_) {
      if (now >= op->work->deadline() &&
          (timing_out_ == nullptr || op->work->seq < timing_out_->work->seq)) {
        timing_out_ = op.get();
      }
    }
    if (timing_out_ == nullptr) return;
    health_.start_query();
    query_deadline_ = now + kStatusQueryBudget;
  }
  if (!health_.query_complete() && now < query_deadline_) return;
  CollectiveOp* op = std::exchange(timing_out_, nullptr);
  fail_group(FailureKind::kTimeout,
             timeout_message(*op),
             op,
             /*notify=*/true,
             /*hang_report=*/true);
}

std::string CommLoop::timeout_message(const CollectiveOp& op) const {
  const WorkState& work = *op.work;
  const bool exit = work.seq == 0;
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      work.deadline() - work.enqueued);
  std::string message =
      exit
          ? detail::str("exit on ",
                        group_->where(),
                        " timed out after ",
                        format_duration(waited),
                        " waiting for the other ranks to finish (MPI_Finalize needs all)")
          : detail::str(work.description,
                        " timed out after ",
                        format_duration(waited),
                        " on ",
                        group_->where());
  std::vector<std::string> missing;
  for (int r = 0; r < group_->size; ++r) {
    if (r == group_->rank) continue;
    const PeerStatus& s = health_.replies()[static_cast<size_t>(r)];
    if (!s.answered) {
      missing.push_back(detail::str("rank ",
                                    r,
                                    " did not answer a status query within ",
                                    format_duration(kStatusQueryBudget),
                                    " (it exited, was killed, or is stuck)"));
    } else if (exit) {
      if (!s.exiting) {
        missing.push_back(detail::str(
            "rank ", r, " is still running (its last collective is #", s.enqueued, ")"));
      }
    } else if (s.enqueued < work.seq && s.exiting) {
      missing.push_back(detail::str(
          "rank ", r, " is exiting instead (its last collective is #", s.enqueued, ")"));
    } else if (s.enqueued < work.seq) {
      missing.push_back(
          s.enqueued == 0
              ? detail::str(
                    "rank ", r, " has not called it yet (nor any collective before it)")
              : detail::str("rank ",
                            r,
                            " has not called it yet (its last collective is #",
                            s.enqueued,
                            ")"));
    } else if (s.started < work.seq) {
      missing.push_back(detail::str("rank ", r, " has called it but not started it"));
    }
  }
  if (group_->size == 1) return message;
  if (missing.empty() && exit) return message;
  if (missing.empty()) {
    return message + ": every rank has started it, but " +
           (op.stage == OpStage::kGpu    ? "NCCL"
            : op.stage == OpStage::kHost ? "the shared-memory reduction"
                                         : "MPI") +
           " has not completed it (do the ranks call collectives in different orders, or "
           "with different sizes?)";
  }
  message += ": ";
  for (size_t i = 0; i < missing.size(); ++i) message += (i > 0 ? "; " : "") + missing[i];
  return message;
}

std::string CommLoop::failed_earlier(const CollectiveOp& op) const {
  return detail::str(op.work->description,
                     " failed on ",
                     group_->where(),
                     " because the process group failed: ",
                     group_->failure_message());
}

void CommLoop::fail_group(FailureKind kind,
                          const std::string& message,
                          CollectiveOp* root,
                          bool notify,
                          bool hang_report) {
  const bool first = group_->fail(kind, message);
  // Both before any waiter hears of the failure: the process may exit then.
  if (first && hang_report) print_hang_report();
  if (first && notify) health_.notify_failure(kind, message);
  if (root != nullptr) {
    root->work->finish(group_->make_error(first ? message : failed_earlier(*root)));
  }
  for (auto& op : active_) op->work->finish(group_->make_error(failed_earlier(*op)));
  // Never handed to MPI: nothing holds them.
  for (auto& op : unchecked_) op->work->finish(group_->make_error(failed_earlier(*op)));
  unchecked_.clear();
}

void CommLoop::print_hang_report() {
  const std::string record = group_->recorder.report(Clock::now());
  std::string report = detail::str("tandem: hang report of ",
                                   group_->where(),
                                   ": the process group failed: ",
                                   group_->failure_message(),
                                   "\n");
  report += record.empty()
                ? detail::str("tandem: ", group_->where(), " had called no collective\n")
                : detail::str("tandem: the last collectives of ",
                              group_->where(),
                              ", oldest first:\n",
                              record);
  // One write, so that the launcher does not interleave it with other ranks.
  std::fputs(report.c_str(), stderr);
  std::fflush(stderr);
  group_->failure_reported.store(true);
}

}  // namespace tandem::distributed::detail
