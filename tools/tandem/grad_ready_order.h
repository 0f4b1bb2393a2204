// A distributed run's gradient-ready order in its checkpoint, so that the
// run resumed from it buckets its gradients as the uninterrupted run did
// from its second step on (DistributedDataParallelOptions::grad_ready_order:
// with three or more processes the buckets' layout decides how their sums
// round).
#pragma once

#include <string>
#include <vector>

#include "tandem/io/checkpoint.h"

namespace tandem::cli {

/// Records `order` (nothing when empty: one process, or no step yet).
void record_grad_ready_order(const std::vector<size_t>& order,
                             io::Checkpoint& checkpoint);

/// The order `checkpoint` records (empty if none), or a tandem::Error
/// naming the damaged value.
std::vector<size_t> recorded_grad_ready_order(const io::Checkpoint& checkpoint,
                                              const std::string& path);

}  // namespace tandem::cli
