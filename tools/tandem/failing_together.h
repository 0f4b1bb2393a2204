// Failures of a distributed run's set-up reported once. Every process of
// `mpirun -np N tandem train ...` reads the same flags, checkpoint and
// data, so a bad one fails them all alike, and each printing it would
// interleave N copies of the error. Set-up runs before any collective, so
// one allreduce can tell every process which failed: the lowest failing
// rank reports its error, the others end quietly (QuietExit).
//
//   set_up_together(group.get(), [&] { config = read_flags(); });
#pragma once

#include <functional>

#include "tandem/distributed/process_group.h"

namespace tandem::cli {

/// Runs `set_up`, which must call no collective. Without a group it only
/// runs it. With one, every process must call this at the same point; if
/// any process's `set_up` threw, the lowest such rank rethrows its error
/// and every other process throws QuietExit with the exit code that error
/// gives (2 for a UsageError, else 1), so mpirun's status is the same
/// whichever process it hears from first.
void set_up_together(distributed::ProcessGroup* group,
                     const std::function<void()>& set_up);

}  // namespace tandem::cli
