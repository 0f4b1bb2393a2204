// `--profile FILE` for tandem train and bench: the run is recorded by
// tandem::profiler, its Chrome trace written to FILE (under mpirun, each
// process writes FILE with its rank before the extension: run.rank1.json)
// and the busiest spans printed as a table when the run ends, also when a
// signal stopped it.
//
//   ProfiledRun profiled(path, rank);   // checks FILE can be written
//   ... the run ...
//   profiled.finish(std::cout);
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>

#include "tandem/core/profiler.h"

namespace tandem::cli {

CLI::Option* add_profile_flag(CLI::App& command, std::string& path);

/// The trace file of process `rank` (-1: not under mpirun) for `path`.
std::string trace_path_of_rank(const std::string& path, int rank);

class ProfiledRun {
 public:
  /// Starts recording when `path` is not empty; throws naming the path
  /// when it cannot be written.
  ProfiledRun(const std::string& path, int rank);
  /// Stops recording, writes the trace, and prints the table and where the
  /// trace went on `out` (when `report`). Does nothing without a path.
  void finish(std::ostream& out, bool report);

 private:
  std::string path_;
  int rank_;
  std::unique_ptr<profiler::Session> session_;
};

}  // namespace tandem::cli
