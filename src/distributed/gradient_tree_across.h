// Private: DistributedDataParallel's invariant mode sums the micro-batches'
// gradients in the pairwise tree of tandem/parallel/gradient_tree.h across
// the processes (Note [Invariant mode across processes] in
// gradient_tree_across.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed::detail {

/// Rank r holds micro-batches [bounds[r], bounds[r + 1]) of the batch's
/// bounds.back(), and per_replica[j][i] is this rank's gradient of
/// parameter i from its micro-batch bounds[rank] + j. Returns each
/// parameter's gradient summed over every rank's micro-batches in the
/// tree, on `destination`: bitwise what one process holding them all sums
/// (parallel::detail::sum_in_pairwise_tree). A collective: every rank
/// calls it once per backward, with the same bounds. The gradients are of
/// one dtype.
std::vector<Tensor> sum_tree_across_ranks(ProcessGroup& group,
                                          const std::vector<int64_t>& bounds,
                                          std::vector<std::vector<Tensor>>&& per_replica,
                                          Device destination);

}  // namespace tandem::distributed::detail
