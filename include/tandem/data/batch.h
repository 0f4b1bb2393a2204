// Batch: a collated batch as the DataLoader hands it out, an Example<>
// (data [N, ...], target [N]) that also knows where it sits in its epoch.
//
//   for (const tandem::data::Batch& batch : loader->epoch(epoch)) {
//     step(batch.data, batch.target);
//     // a checkpoint saved here resumes at (epoch, batch.index + 1)
//   }
//
// A dataset whose batches are one Example<> (a TensorDataset, or any
// dataset mapped through transforms::Stack<>) gives Batches; any other
// batch type (a vector of examples, a TensorExample, a type of one's own)
// comes as the dataset makes it, as in LibTorch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "tandem/data/example.h"

namespace tandem::data {

struct Batch : Example<> {
  Batch() = default;
  Batch(Example<> rows, int64_t index_in, int64_t global_size_in)
      : Example<>(std::move(rows)), index(index_in), global_size(global_size_in) {}

  /// The batch's position in its epoch (0, 1, ...).
  int64_t index = 0;
  /// Rows of the whole (unsharded) batch: data.size(0) when unsharded; the
  /// sum of data.size(0) over all shards when sharded (e.g. for averaging
  /// a loss over the global batch). See DataLoaderOptions::shard.
  int64_t global_size = 0;
};

namespace detail {

/// Batch `index` of its epoch as the loader hands it out: an Example<>
/// becomes a Batch; anything else stays as the dataset made it.
inline Batch to_loader_batch(Example<> rows, size_t index, size_t global_size) {
  return {
      std::move(rows), static_cast<int64_t>(index), static_cast<int64_t>(global_size)};
}
template <typename DatasetBatch>
DatasetBatch to_loader_batch(DatasetBatch batch,
                             size_t /*index*/,
                             size_t /*global_size*/) {
  return batch;
}

/// Whether a batch holds its examples as rows of tensors (a Tensor, or an
/// Example with a data tensor), rather than as a list of examples.
template <typename DatasetBatch>
constexpr bool kHasRows = std::is_same_v<DatasetBatch, Tensor> ||
                          requires(DatasetBatch batch) {
  batch.data;
};

/// `batch` with none of its rows: shape [0, ...], same dtype and device.
/// A tensor without rows (undefined, 0-dim) stays as it is.
template <typename DatasetBatch>
requires kHasRows<DatasetBatch> DatasetBatch without_rows(DatasetBatch batch) {
  if constexpr (std::is_same_v<DatasetBatch, Tensor>) {
    return batch.defined() && batch.dim() >= 1 ? batch.narrow(0, 0, 0) : batch;
  } else {
    batch.data = without_rows(std::move(batch.data));
    if constexpr (requires { batch.target; }) {
      batch.target = without_rows(std::move(batch.target));
    }
    return batch;
  }
}

}  // namespace detail
}  // namespace tandem::data
