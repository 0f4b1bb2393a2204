// Datasets held in memory as tensors.
//
// TensorDataset pairs row i of `data` with row i of `targets`, like
// PyTorch's TensorDataset(x, y). (LibTorch's TensorDataset holds one tensor
// and yields TensorExample; pass no targets to get the same rows.) Its
// gather() makes a whole batch with one index_select per tensor, which the
// DataLoader uses instead of one get() per example (so its batches of a
// TensorDataset come collated, as PyTorch's DataLoader gives them).
//
// RandomDataset is the seed tutorial's toy: `length` rows of `size`
// standard-normal features (from the default generator), without targets.
//
//   tandem::data::TensorDataset train(images, labels);
//   tandem::data::Example<> batch = train.gather(std::vector<size_t>{4, 0, 7});
//   tandem::data::RandomDataset random(/*size=*/5, /*length=*/100);
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "tandem/data/dataset.h"

namespace tandem::data {

class TensorDataset : public datasets::Dataset<TensorDataset> {
 public:
  /// `targets` may be undefined (examples then have an undefined target);
  /// otherwise it has as many rows as `data`.
  explicit TensorDataset(Tensor data, Tensor targets = Tensor());

  Example<> get(size_t index) override;
  std::optional<size_t> size() const override;
  /// The examples at `indices`, collated: data [n, ...], targets [n, ...].
  Example<> gather(std::span<const size_t> indices) const;

  const Tensor& data() const { return data_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor data_;
  Tensor targets_;
};

class RandomDataset : public datasets::Dataset<RandomDataset, TensorExample> {
 public:
  RandomDataset(int64_t size, int64_t length);

  TensorExample get(size_t index) override;
  std::optional<size_t> size() const override;

  /// All rows, [length, size].
  const Tensor& data() const { return data_; }

 private:
  Tensor data_;
};

}  // namespace tandem::data
