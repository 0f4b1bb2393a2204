// Private: DistributedDataParallel's first collective, the check that every
// rank wraps the same model.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/distributed/process_group.h"

namespace tandem::distributed::detail {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

/// Compares every rank's managed parameters (count, then in order: name,
/// sizes, strides, dtype, device type) and buffers (name, sizes, dtype)
/// with every other rank's. On any difference every rank throws
/// ModelMismatchError naming the first difference it concerns (see
/// model_check.cpp); no rank is left waiting. One small allgather when the
/// models agree, three when they do not.
void verify_same_model(ProcessGroup& group,
                       const NamedTensors& params,
                       const NamedTensors& buffers);

}  // namespace tandem::distributed::detail
