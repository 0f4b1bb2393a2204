// `--profile FILE` for tandem train and bench: the run is recorded by
// tandem::profiler, its Chrome trace written to FILE and the busiest spans
// printed as a table when the run ends, also when a signal stopped it.
// Under mpirun, a run that ends together is gathered into one FILE by rank
// 0 (every rank's devices, on rank 0's clock: distributed/trace.h); one
// that failed or was stopped leaves each rank's own, with its rank before
// the extension (run.rank1.json), since the ranks may no longer meet.
//
// `--profile-steps A-B` records steps A to B only (from 1, as the progress
// line counts them; `--profile-steps 5` is step 5 alone). `--profile-shapes`
// records each op's input shapes and dtypes too, and the table has a row
// per op and list of input shapes.
//
//   ProfiledRun profiled(flags, group, steps);  // checks FILE can be written
//   ... profiled.before_step(n) before each step n ...
//   profiled.finish(std::cout, /*together=*/code == 0);
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "tandem/core/profiler.h"
#include "tandem/distributed/process_group.h"

namespace tandem::cli {

/// Steps first..last (from 1, both included); {0, 0}: every step.
struct StepRange {
  int64_t first = 0;
  int64_t last = 0;
  bool every_step() const { return first == 0; }
};

/// "A-B" or "A" as a StepRange; "" is every step. Throws UsageError naming
/// --profile-steps.
StepRange parse_step_range(const std::string& text);

/// What the profiling flags say.
struct ProfileFlags {
  std::string path;   // --profile FILE ("": no profile)
  std::string steps;  // --profile-steps A-B
  bool shapes = false;
};

/// --profile FILE, --profile-steps A-B and --profile-shapes.
void add_profile_flags(CLI::App& command, ProfileFlags& flags);

/// The trace file of process `rank` (-1: not under mpirun) for `path`.
std::string trace_path_of_rank(const std::string& path, int rank);

class ProfiledRun {
 public:
  /// Records `steps` (flags.steps parsed, or what the command chose
  /// instead) when flags.path is not empty (from now on, for every step);
  /// throws naming the path when it cannot be written. `group`: the job's,
  /// or null alone.
  ProfiledRun(const ProfileFlags& flags,
              distributed::ProcessGroup* group,
              StepRange steps);
  /// Before step `step` (from 1): starts or ends the recording of a range.
  void before_step(int64_t step);
  /// Stops recording and writes the trace: one for the job when `together`
  /// (every rank calls it), else this process's own. Rank 0 (or a lone
  /// process) prints where it went and the table on `out`. Does nothing
  /// without a path.
  void finish(std::ostream& out, bool together);
  /// After a failure: stops and writes this process's own trace, silently.
  void finish_alone();

 private:
  void start();
  std::vector<profiler::Event> stop_and_take();

  std::string path_;
  bool shapes_;
  distributed::ProcessGroup* group_;
  StepRange steps_;
  std::unique_ptr<profiler::Session> session_;  // once recording started
};

}  // namespace tandem::cli
