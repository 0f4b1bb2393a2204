// AutogradContext: what a custom autograd function (autograd::Function<T>,
// tandem/autograd/function.h) carries from its forward to its backward.
// forward gets one, fills it, and tells autograd about its outputs; the
// graph keeps it until backward has run (or, with retain_graph, until the
// graph is freed).
//
//   static Tensor forward(AutogradContext* ctx, Tensor x, double c) {  // c x^2
//     ctx->save_for_backward({x});
//     ctx->saved_data["c"] = c;
//     return x * x * c;
//   }
//   static variable_list backward(AutogradContext* ctx, variable_list g) {
//     Tensor x = ctx->get_saved_variables()[0];
//     double c = ctx->saved_data["c"].toDouble();
//     return {g[0] * x * (2 * c), Tensor()};  // none for the double
//   }
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "tandem/autograd/ivalue.h"
#include "tandem/graph/node.h"

namespace tandem::autograd {

using variable_list = tensor_list;
using Variable = Tensor;

namespace detail {
class CustomFunctionCall;
}

class AutogradContext {
 public:
  AutogradContext() = default;
  AutogradContext(const AutogradContext&) = delete;
  AutogradContext& operator=(const AutogradContext&) = delete;
  AutogradContext(AutogradContext&&) = delete;
  AutogradContext& operator=(AutogradContext&&) = delete;
  ~AutogradContext() = default;

  /// Values other than tensors for backward (ints, doubles, strings, ...).
  /// Tensors belong in save_for_backward: a forward output kept here holds
  /// the graph that holds this context, which then lives as long as the
  /// output does (as in LibTorch).
  std::unordered_map<std::string, IValue> saved_data;

  /// Keeps inputs, outputs or other tensors of forward for backward (call
  /// it once, in forward). Undefined tensors are kept as undefined.
  void save_for_backward(variable_list to_save);
  /// The tensors given to save_for_backward, in order. Throws, naming the
  /// function, if one was modified in place after forward; under
  /// create_graph they carry their history, so backward can be
  /// differentiated again.
  variable_list get_saved_variables() const;

  /// Says that forward changed these inputs in place; each must also be
  /// returned as an output, which then takes the input's place in the
  /// graph. A leaf that requires grad cannot be changed in place.
  void mark_dirty(const variable_list& inputs);
  /// Says that these outputs are not differentiable: they do not require
  /// grad, and backward receives zeros (or, without materialized grads,
  /// undefined tensors) for them. Outputs that are not floating point are
  /// never differentiable.
  void mark_non_differentiable(const variable_list& outputs);
  /// Whether backward receives zeros (true, the default) or undefined
  /// tensors for outputs whose gradient never arrived.
  void set_materialize_grads(bool value);

  /// Whether the gradient of forward's tensor input `output_edge_index`
  /// is needed: it requires grad and, inside autograd::grad, leads to a
  /// requested input. The index counts only the tensor arguments of
  /// forward (as in LibTorch): for forward(ctx, double c, Tensor x),
  /// needs_input_grad(0) is about x.
  bool needs_input_grad(size_t output_edge_index) const;

 private:
  friend class detail::CustomFunctionCall;

  std::string name_;  // of the function, for messages
  variable_list to_save_;
  std::vector<SavedVariable> saved_variables_;
  variable_list dirty_;
  variable_list non_differentiable_;
  bool materialize_grads_ = true;
  // The node that owns this context (weak: the node owns us).
  std::weak_ptr<Node> node_;
};

}  // namespace tandem::autograd
