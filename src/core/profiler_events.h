// Private: what the profiler's recording (profiler.cpp), its table
// (profiler_table.cpp) and its trace (chrome_trace.cpp) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tandem/core/profiler.h"

namespace tandem::profiler::detail {

/// `events` ordered by start time (stable: ties keep their order).
std::vector<Event> by_start(std::vector<Event> events);

/// `ns` in units of `unit_ns` (1000: microseconds), three decimals.
std::string in_units(int64_t ns, double unit_ns);
inline std::string microseconds(int64_t ns) { return in_units(ns, 1e3); }
inline std::string milliseconds(int64_t ns) { return in_units(ns, 1e6); }

}  // namespace tandem::profiler::detail
