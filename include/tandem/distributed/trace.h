// One profile for a whole job: every rank's profiler events brought to
// rank 0, each on rank 0's clock, so that one Chrome trace shows every
// rank's devices (a process per rank and device).
//
//   profiler::Session session;
//   ... steps ...
//   session.stop();
//   auto all = distributed::gather_trace(*group, session.events());
//   if (group->rank() == 0) profiler::write_chrome_trace(all, "job.json");
#pragma once

#include <vector>

#include "tandem/core/profiler.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed {

/// A rank's clock minus rank 0's, in nanoseconds, as measured by
/// clock_offsets: subtracting it puts the rank's times on rank 0's clock.
/// Every rank of `group` calls it; each gets every rank's offset.
std::vector<int64_t> clock_offsets(ProcessGroup& group);

/// On rank 0, every rank's `events` (its own first), each with its rank
/// set and its times on rank 0's clock; on the others, nothing. Every rank
/// of `group` calls it.
std::vector<profiler::Event> gather_trace(ProcessGroup& group,
                                          const std::vector<profiler::Event>& events);

}  // namespace tandem::distributed
