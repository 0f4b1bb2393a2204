// A trace drawn as a timeline, SVG by hand: a lane per thread, grouped by
// process (a device, or a rank's device), each span a bar at its time and
// nesting depth, coloured by category, with its name when it fits; the
// arrows between spans (a copy to its reader, a DDP bucket's launch to
// its allreduce); a time axis in milliseconds and a key to the colours.
//
//   const std::string svg = trace_svg(read_trace_file("run.json"));
//
// Each bar says what it draws: data-name, data-cat, data-pid, data-tid,
// data-ts and data-dur (the trace's numbers, in microseconds, as the
// shortest text that reads back the same), and a <title> a browser shows
// on hover; the axis ticks carry data-value (milliseconds).
#pragma once

#include <string>

#include "trace_file.h"

namespace tandem::cli {

/// The timeline as a standalone SVG document. Throws tandem::Error for a
/// trace without spans.
std::string trace_svg(const TraceFile& trace);

/// The colour of a span category (the same one in every picture).
const char* category_colour(const std::string& category);

}  // namespace tandem::cli
