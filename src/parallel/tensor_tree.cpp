#include "tandem/parallel/tensor_tree.h"

#include <utility>

#include "tandem/core/error.h"

namespace tandem::parallel {
namespace {

void collect(const TensorTree& tree, std::vector<Tensor>& out) {
  if (tree.is_tensor()) {
    if (tree.tensor().defined()) out.push_back(tree.tensor());
    return;
  }
  for (const TensorTree& item : tree.list()) collect(item, out);
}

}  // namespace

TensorTree::TensorTree(Tensor tensor) : is_tensor_(true), tensor_(std::move(tensor)) {}

TensorTree::TensorTree(std::vector<TensorTree> items) : items_(std::move(items)) {}

TensorTree::TensorTree(const std::vector<Tensor>& items)
    : items_(items.begin(), items.end()) {}

TensorTree::TensorTree(std::initializer_list<TensorTree> items) : items_(items) {}

const Tensor& TensorTree::tensor() const {
  TANDEM_CHECK(is_tensor_,
               "TensorTree: expected a tensor, got a list of ",
               items_.size(),
               " items");
  return tensor_;
}

const std::vector<TensorTree>& TensorTree::list() const {
  TANDEM_CHECK(!is_tensor_, "TensorTree: expected a list, got a tensor");
  return items_;
}

const TensorTree& TensorTree::operator[](size_t index) const {
  const std::vector<TensorTree>& items = list();
  TANDEM_CHECK_INDEX(index < items.size(),
                     "TensorTree: index ",
                     index,
                     " is out of range for a list of ",
                     items.size(),
                     " items");
  return items[index];
}

std::vector<Tensor> TensorTree::tensors() const {
  std::vector<Tensor> out;
  collect(*this, out);
  return out;
}

TensorTree TensorTree::map(const std::function<Tensor(const Tensor&)>& fn) const {
  if (is_tensor_) return tensor_.defined() ? TensorTree(fn(tensor_)) : *this;
  std::vector<TensorTree> items;
  items.reserve(items_.size());
  for (const TensorTree& item : items_) items.push_back(item.map(fn));
  return TensorTree(std::move(items));
}

}  // namespace tandem::parallel
