#include "distributed/flight_recorder.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

namespace tandem::distributed::detail {
namespace {

// "0.04 ms", "3.1 ms", "12 ms", "2.5 s".
std::string seconds(FlightRecorder::Clock::duration d) {
  const double ms = std::chrono::duration<double, std::milli>(d).count();
  std::ostringstream out;
  if (ms < 1) {
    out << std::fixed << std::setprecision(2) << ms << " ms";
  } else if (ms < 10) {
    out << std::fixed << std::setprecision(1) << ms << " ms";
  } else if (ms < 1000) {
    out << std::fixed << std::setprecision(0) << ms << " ms";
  } else {
    out << std::fixed << std::setprecision(1) << ms / 1000 << " s";
  }
  return out.str();
}

}  // namespace

// Note [The hang report]
// ~~~~~~~~~~~~~~~~~~~~~~
// When a collective times out, the rank that saw it says which ranks had
// not reached it (Note [Naming the missing rank] in comm_loop.cpp). That
// names the straggler but not what the others were doing, which is what a
// mismatched program needs: rank 0 in bucket 3's allreduce while rank 1
// waits in a broadcast. So every group keeps its last kDepth collectives
// (description, when each was called, started and finished), and when the
// group fails by a timeout, its own or one a peer reported, each rank
// prints its record to stderr in one write, oldest first. The ranks' records
// side by side show where their sequences part.

FlightRecorder::Entry* FlightRecorder::find(uint64_t seq) {
  Entry& e = entries_[seq % kDepth];
  return e.seq == seq ? &e : nullptr;
}

void FlightRecorder::called(uint64_t seq,
                            const std::string& description,
                            Clock::time_point at) {
  std::lock_guard<std::mutex> lock(mu_);
  entries_[seq % kDepth] = Entry{seq, description, at, {}, {}, false, false, false};
}

void FlightRecorder::started(uint64_t seq, Clock::time_point at) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Entry* e = find(seq)) {
    e->started = at;
    e->has_started = true;
  }
}

void FlightRecorder::finished(uint64_t seq, Clock::time_point at, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  if (Entry* e = find(seq)) {
    e->finished = at;
    e->has_finished = true;
    e->failed = failed;
  }
}

std::string FlightRecorder::report(Clock::time_point now) const {
  std::vector<const Entry*> used;
  std::lock_guard<std::mutex> lock(mu_);
  for (const Entry& e : entries_) {
    if (e.seq != 0) used.push_back(&e);
  }
  std::sort(used.begin(), used.end(), [](const Entry* a, const Entry* b) {
    return a->seq < b->seq;
  });
  std::string out;
  for (const Entry* e : used) {
    out += "  " + e->description + ": ";
    if (e->has_finished) {
      out += (e->failed ? "failed after " : "completed in ") +
             seconds(e->finished - e->called);
    } else if (e->has_started) {
      out += "started " + seconds(now - e->started) + " ago, not completed";
    } else {
      out += "called " + seconds(now - e->called) + " ago, not started";
    }
    out += "\n";
  }
  return out;
}

}  // namespace tandem::distributed::detail
