// Example: one (data, target) pair of a dataset, with LibTorch's names.
//
//   tandem::data::Example<> e{image, label};     // Tensor data, Tensor target
//   tandem::data::TensorExample x{features};     // data only, no target
//
// A collated batch is an Example too: data [N, ...] and target [N].
#pragma once

#include <utility>

#include "tandem/core/tensor.h"

namespace tandem::data {
namespace example {
/// The target type of examples that have none (LibTorch's NoTarget).
struct NoTarget {};
}  // namespace example

template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

/// An example without a target: converts to its data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // implicit

  operator Data&() { return data; }              // implicit
  operator const Data&() const { return data; }  // implicit

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace tandem::data
