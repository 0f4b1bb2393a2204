// The process group of a `tandem` command started by an MPI launcher
// (`mpirun -np 4 tandem train ...`).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "tandem/distributed/process_group.h"

namespace tandem::cli {

/// Under an MPI launcher: initializes the process group and, unless the
/// global --threads flag was given, gives this process its share of the
/// host's cores (all of them divided by the processes on the host), so N
/// processes on one machine never oversubscribe it. Null when the command
/// runs alone (MPI is then never initialized).
std::shared_ptr<distributed::ProcessGroup> launched_group();

/// This process's rank under an MPI launcher, from the environment the
/// launcher sets (so it is known before MPI starts, while the command line
/// is read); nullopt when the command runs alone.
std::optional<int> launched_rank();

/// This process's consecutive part of `rows` rows: `group`'s size parts
/// whose sizes differ by at most one, the larger first (torch.tensor_split),
/// as DataLoaderOptions::shard splits a batch. All rows without a group.
struct RowRange {
  int64_t begin = 0;
  int64_t length = 0;
};
RowRange rows_of_this_process(const distributed::ProcessGroup* group, int64_t rows);
/// Part `rank` of consecutive parts of the sizes `cut` gives.
RowRange part_of(const std::vector<int64_t>& cut, int rank);

}  // namespace tandem::cli
