// The process group of a `tandem` command started by an MPI launcher
// (`mpirun -np 4 tandem train ...`).
#pragma once

#include <memory>

#include "tandem/distributed/process_group.h"

namespace tandem::cli {

/// Under an MPI launcher: initializes the process group and, unless the
/// global --threads flag was given, gives this process its share of the
/// host's cores (all of them divided by the processes on the host), so N
/// processes on one machine never oversubscribe it. Null when the command
/// runs alone (MPI is then never initialized).
std::shared_ptr<distributed::ProcessGroup> launched_group();

}  // namespace tandem::cli
