#include "tandem/data/tensor_dataset.h"

#include "tandem/ops/factory.h"
#include "tandem/ops/indexing.h"

namespace tandem::data {

TensorDataset::TensorDataset(Tensor data, Tensor targets)
    : data_(std::move(data)), targets_(std::move(targets)) {
  TANDEM_CHECK(data_.defined(), "TensorDataset: data is undefined");
  TANDEM_CHECK(data_.dim() >= 1,
               "TensorDataset: data needs a first dim that counts the examples, got a "
               "0-dim tensor");
  TANDEM_CHECK(
      !targets_.defined() || (targets_.dim() >= 1 && targets_.size(0) == data_.size(0)),
      "TensorDataset: data has ",
      data_.size(0),
      " rows (shape ",
      data_.sizes(),
      ") but targets have shape ",
      targets_.defined() ? targets_.sizes() : IntList{});
}

Example<> TensorDataset::get(size_t index) {
  TANDEM_CHECK_INDEX(index < static_cast<size_t>(data_.size(0)),
                     "TensorDataset: index ",
                     index,
                     " is out of range for ",
                     data_.size(0),
                     " examples");
  const auto i = static_cast<int64_t>(index);
  return {data_[i], targets_.defined() ? targets_[i] : Tensor()};
}

std::optional<size_t> TensorDataset::size() const {
  return static_cast<size_t>(data_.size(0));
}

Example<> TensorDataset::gather(std::span<const size_t> indices) const {
  Tensor index = empty({static_cast<int64_t>(indices.size())}, kInt64);
  int64_t* out = index.data_ptr<int64_t>();
  for (size_t i = 0; i < indices.size(); ++i) out[i] = static_cast<int64_t>(indices[i]);
  index = index.to(data_.device());
  return {data_.index_select(0, index),
          targets_.defined() ? targets_.index_select(0, index.to(targets_.device()))
                             : Tensor()};
}

RandomDataset::RandomDataset(int64_t size, int64_t length)
    : data_(randn({length, size})) {}

TensorExample RandomDataset::get(size_t index) {
  TANDEM_CHECK_INDEX(index < static_cast<size_t>(data_.size(0)),
                     "RandomDataset: index ",
                     index,
                     " is out of range for ",
                     data_.size(0),
                     " examples");
  return data_[static_cast<int64_t>(index)];
}

std::optional<size_t> RandomDataset::size() const {
  return static_cast<size_t>(data_.size(0));
}

}  // namespace tandem::data
