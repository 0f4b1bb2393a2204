// parallel_apply: runs modules[i] on inputs[i] on devices[i]'s executor
// thread, all at once, as LibTorch's torch::nn::parallel::parallel_apply.
// The threads are the devices' persistent executors (nothing is created per
// call); each call runs with its device current and with the caller's grad
// mode. Outputs are returned as the modules produced them.
//
// If replicas throw, the lowest-index failure is rethrown in the caller as
// a tandem::Error reading "Caught <exception type> in replica <i> on device
// <device>: <original message>", with the original exception nested
// (std::rethrow_if_nested reaches it).
//
// A module's forward takes a Tensor or a TensorTree and returns a Tensor, a
// TensorTree or a std::vector<Tensor>.
//
//   auto replicas = tandem::parallel::replicate(model, devices);
//   auto inputs = tandem::parallel::scatter(x, devices);
//   std::vector<tandem::Tensor> outputs =
//       tandem::parallel::parallel_apply(replicas, inputs, devices);
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/error.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/parallel/tensor_tree.h"

namespace tandem::parallel {

/// A module (or module pointer/holder dereferenced) whose forward takes a
/// TensorTree, or else a Tensor.
template <typename M>
concept tree_forward = requires(M& m, const TensorTree& x) {
  { m.forward(x) } -> std::convertible_to<TensorTree>;
};
template <typename M>
concept tensor_forward = requires(M& m, const Tensor& x) {
  { m.forward(x) } -> std::convertible_to<TensorTree>;
};

namespace detail {

/// Calls module.forward with `input` in the form it takes.
template <typename M>
requires tree_forward<M> || tensor_forward<M> TensorTree
call_forward(M& module, const TensorTree& input) {
  if constexpr (tree_forward<M>) {
    return TensorTree(module.forward(input));
  } else {
    TANDEM_CHECK(input.is_tensor(),
                 "forward of ",
                 module.name(),
                 " takes one Tensor, but was given a list of ",
                 input.size(),
                 " items");
    return TensorTree(module.forward(input.tensor()));
  }
}

/// parallel_apply for any module type: call(i, input) runs module i.
std::vector<TensorTree> parallel_apply(
    size_t num_modules,
    const std::function<TensorTree(size_t, const TensorTree&)>& call,
    const std::vector<TensorTree>& inputs,
    const std::optional<std::vector<Device>>& devices);

}  // namespace detail

/// Runs modules[i]->forward(inputs[i]) on devices[i] (by default, the
/// device of the first tensor of inputs[i]), concurrently.
template <typename ModuleType>
std::vector<TensorTree> parallel_apply(
    std::vector<ModuleType>& modules,
    const std::vector<TensorTree>& inputs,
    const std::optional<std::vector<Device>>& devices = std::nullopt) {
  return detail::parallel_apply(
      modules.size(),
      [&modules](size_t i, const TensorTree& input) {
        return detail::call_forward(*modules[i], input);
      },
      inputs,
      devices);
}

/// The same for one tensor in and one tensor out per module (LibTorch's).
template <typename ModuleType>
std::vector<Tensor> parallel_apply(
    std::vector<ModuleType>& modules,
    const std::vector<Tensor>& inputs,
    const std::optional<std::vector<Device>>& devices = std::nullopt) {
  std::vector<Tensor> outputs;
  for (const TensorTree& out : parallel_apply(
           modules, std::vector<TensorTree>(inputs.begin(), inputs.end()), devices)) {
    outputs.push_back(out.tensor());
  }
  return outputs;
}

}  // namespace tandem::parallel
