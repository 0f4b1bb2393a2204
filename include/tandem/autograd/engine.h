// The backward engine: runs a graph of autograd nodes from roots to leaves.
//
// Nodes run once all their gradients have arrived, later-created nodes
// first. Tensor::backward() accumulates into the leaves' .grad;
// autograd::grad() returns the gradients of chosen inputs instead and leaves
// .grad alone.
//
//   auto loss = (w * x).sum();
//   loss.backward();                                  // w.grad() filled
//   auto g = tandem::autograd::grad({loss2}, {w});    // returns dloss2/dw
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "tandem/graph/node.h"

namespace tandem::autograd {

/// Accumulates d(roots)/d(leaf) into every leaf's .grad. `grad_roots` may be
/// empty for scalar roots (taken as ones) or hold one gradient per root.
/// `retain_graph` keeps the saved tensors for another backward (default:
/// create_graph). `create_graph` records the backward pass itself, so the
/// gradients can be differentiated again (see Note [Double backward]).
/// The argument order is LibTorch's.
void backward(const tensor_list& roots,
              const tensor_list& grad_roots = {},
              std::optional<bool> retain_graph = std::nullopt,
              bool create_graph = false);

/// Returns d(outputs)/d(inputs) (weighted by grad_outputs) without touching
/// .grad. An input the outputs do not depend on is an error unless
/// allow_unused, when its gradient is undefined. With create_graph the
/// returned gradients have a history (a gradient penalty, say):
///
///   auto g = autograd::grad({critic(x).sum()}, {x}, {}, {}, /*create_graph=*/true);
///   auto penalty = square(sqrt(square(g[0]).sum()) - 1);  // differentiable
tensor_list grad(const tensor_list& outputs,
                 const tensor_list& inputs,
                 const tensor_list& grad_outputs = {},
                 std::optional<bool> retain_graph = std::nullopt,
                 bool create_graph = false,
                 bool allow_unused = false);

/// Runs `callback` once the backward pass that is calling it (from a hook
/// or a node) has run its last node: on the thread that called backward(),
/// before backward() returns (PyTorch's queue_callback). Callbacks run in
/// the order queued; one that throws ends the pass with its exception and
/// the later ones do not run; none runs when the pass itself fails. Throws
/// when no backward pass is running on this thread.
void queue_callback(std::function<void()> callback);

}  // namespace tandem::autograd
