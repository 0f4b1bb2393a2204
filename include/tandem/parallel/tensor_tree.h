// TensorTree: one tensor, or a list of trees (nested lists of tensors), the
// inputs and outputs the parallel layer scatters and gathers. An undefined
// Tensor is a "None" leaf: scatter hands it to every replica unchanged and
// gather returns it undefined.
//
//   using tandem::parallel::TensorTree;
//   TensorTree one(x);                    // a tensor (parentheses)
//   TensorTree nested{a, {b, c}, d};      // a braced list is always a list
//   const Tensor& b2 = nested[1][0].tensor();
//   std::vector<Tensor> all = nested.tensors();   // a, b, c, d
//
// As with std::vector, `TensorTree{x}` is a list holding x; use parentheses
// for the tree that is x itself.
#pragma once

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::parallel {

class TensorTree {
 public:
  /// An empty list.
  TensorTree() = default;
  TensorTree(Tensor tensor);                     // implicit
  TensorTree(std::vector<TensorTree> items);     // implicit
  TensorTree(const std::vector<Tensor>& items);  // implicit
  TensorTree(std::initializer_list<TensorTree> items);

  bool is_tensor() const noexcept { return is_tensor_; }
  bool is_list() const noexcept { return !is_tensor_; }
  /// The tensor of a tensor leaf; throws for a list.
  const Tensor& tensor() const;
  /// The items of a list; throws for a tensor.
  const std::vector<TensorTree>& list() const;
  size_t size() const { return list().size(); }
  /// Item `index` of a list (bounds checked).
  const TensorTree& operator[](size_t index) const;

  /// The defined tensors, depth first.
  std::vector<Tensor> tensors() const;
  /// The same nesting with every defined tensor t replaced by fn(t).
  TensorTree map(const std::function<Tensor(const Tensor&)>& fn) const;

 private:
  bool is_tensor_ = false;
  Tensor tensor_;
  std::vector<TensorTree> items_;
};

}  // namespace tandem::parallel
