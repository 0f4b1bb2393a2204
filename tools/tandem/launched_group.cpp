#include "launched_group.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <string_view>

#include "commands.h"
#include "tandem/core/cpu_budget.h"
#include "tandem/parallel/shares.h"

namespace tandem::cli {

std::shared_ptr<distributed::ProcessGroup> launched_group() {
  if (!distributed::launched_by_mpi()) return nullptr;
  auto group = distributed::init_process_group();
  if (!threads_flag_given()) {
    const int64_t share = num_threads() / distributed::get_local_world_size();
    set_num_threads(std::max<int64_t>(share, 1));
  }
  return group;
}

std::optional<int> launched_rank() {
  if (!distributed::launched_by_mpi()) return std::nullopt;
  // Open MPI's, MPICH's (and Intel MPI's), PMIx's (srun).
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    const char* value = std::getenv(variable);
    if (value == nullptr) continue;
    const std::string_view text(value);
    int rank = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), rank);
    if (ec == std::errc() && end == text.data() + text.size()) return rank;
  }
  return std::nullopt;
}

RowRange rows_of_this_process(const distributed::ProcessGroup* group, int64_t rows) {
  if (group == nullptr) return {0, rows};
  return part_of(parallel::split_evenly(rows, static_cast<size_t>(group->size())),
                 group->rank());
}

RowRange part_of(const std::vector<int64_t>& cut, int rank) {
  RowRange range;
  for (int r = 0; r < rank; ++r) range.begin += cut.at(static_cast<size_t>(r));
  range.length = cut.at(static_cast<size_t>(rank));
  return range;
}

}  // namespace tandem::cli
