// Datasets with LibTorch's shape: a BatchDataset answers a request of
// indices with a batch; a Dataset answers get(index) with one example (its
// batch is a vector of them); map() applies a transform to every batch.
//
//   struct Squares : tandem::data::datasets::Dataset<Squares> {
//     tandem::data::Example<> get(size_t i) override {
//       return {tandem::full({1}, double(i * i)), tandem::full({}, double(i))};
//     }
//     std::optional<size_t> size() const override { return 100; }
//   };
//   auto stacked = Squares().map(tandem::data::transforms::Stack<>());
//
// Loaders copy a dataset into each worker thread and call get() on the
// copies at once, so get() must not touch state shared between copies
// (tensors read, never written, are fine), and must depend only on the
// index for batches to repeat (see Note [Deterministic batches]).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "tandem/data/example.h"

namespace tandem::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset;

template <typename Self, typename Batch, typename BatchRequest = std::span<const size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;

  BatchDataset() = default;
  BatchDataset(const BatchDataset&) = default;
  BatchDataset(BatchDataset&&) noexcept = default;
  BatchDataset& operator=(const BatchDataset&) = default;
  BatchDataset& operator=(BatchDataset&&) noexcept = default;
  virtual ~BatchDataset() = default;

  virtual Batch get_batch(BatchRequest request) = 0;
  /// The number of examples, where known.
  virtual std::optional<size_t> size() const = 0;

  /// A copy of this dataset whose batches pass through `transform`.
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) const& {
    return {static_cast<const Self&>(*this), std::move(transform)};
  }
  template <typename Transform>
  MapDataset<Self, Transform> map(Transform transform) && {
    return {std::move(static_cast<Self&>(*this)), std::move(transform)};
  }
};

template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(std::span<const size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t index : indices) batch.push_back(get(index));
    return batch;
  }
};

/// `SourceDataset` with `AppliedTransform` applied to each batch.
template <typename SourceDataset, typename AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<SourceDataset, AppliedTransform>,
                                       typename AppliedTransform::OutputBatchType,
                                       typename SourceDataset::BatchRequestType> {
 public:
  using DatasetType = SourceDataset;
  using TransformType = AppliedTransform;
  using BatchRequestType = typename SourceDataset::BatchRequestType;
  using OutputBatchType = typename AppliedTransform::OutputBatchType;

  MapDataset(SourceDataset dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  OutputBatchType get_batch(BatchRequestType indices) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(indices)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  const SourceDataset& dataset() const { return dataset_; }
  const AppliedTransform& transform() const { return transform_; }

 private:
  SourceDataset dataset_;
  AppliedTransform transform_;
};

}  // namespace tandem::data::datasets

namespace tandem::data {
// LibTorch's exports: torch::data::Dataset is torch::data::datasets::Dataset.
using datasets::BatchDataset;
using datasets::Dataset;
}  // namespace tandem::data
