// Helpers for the DataLoader tests: a loader shuffled by (seed, epoch), the
// batches of an epoch, and the example indices of counting batches.
//
//   auto loader = data_testing::shuffled(counting_tensors(20), /*seed=*/3,
//                                        DataLoaderOptions().batch_size(4));
//   std::vector<Batch> batches = data_testing::collect(loader->epoch(1));
//   std::vector<int64_t> order = data_testing::indices_of(batches);
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/data/data_loader.h"

namespace tandem::data::data_testing {

/// A loader over `dataset` whose epoch e is shuffled by (seed, e).
template <typename Dataset>
auto shuffled(Dataset dataset, uint64_t seed, DataLoaderOptions options) {
  const size_t size = dataset.size().value();
  return make_data_loader(
      std::move(dataset), samplers::RandomSampler(size, seed), options);
}

/// Every batch of `range` (an epoch, or a pass over a loader), in order.
template <typename Range>
auto collect(Range&& range) {
  std::vector<std::decay_t<decltype(*range.begin())>> batches;
  for (auto& batch : range) batches.push_back(batch);
  return batches;
}

/// The example indices of `batches`, in order (targets of counting data).
template <typename Batches>
std::vector<int64_t> indices_of(const Batches& batches) {
  std::vector<int64_t> out;
  for (const auto& batch : batches) {
    for (int64_t i = 0; i < batch.target.size(0); ++i)
      out.push_back(batch.target[i].template item<int64_t>());
  }
  return out;
}

}  // namespace tandem::data::data_testing
