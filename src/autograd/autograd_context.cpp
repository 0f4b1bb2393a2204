#include "tandem/autograd/autograd_context.h"

#include "autograd/graph_task.h"

namespace tandem::autograd {

void AutogradContext::save_for_backward(variable_list to_save) {
  to_save_ = std::move(to_save);
}

variable_list AutogradContext::get_saved_variables() const {
  variable_list saved;
  saved.reserve(saved_variables_.size());
  for (const SavedVariable& v : saved_variables_)
    saved.push_back(v.unpack(name_.c_str()));
  return saved;
}

void AutogradContext::mark_dirty(const variable_list& inputs) { dirty_ = inputs; }

void AutogradContext::mark_non_differentiable(const variable_list& outputs) {
  non_differentiable_ = outputs;
}

void AutogradContext::set_materialize_grads(bool value) { materialize_grads_ = value; }

bool AutogradContext::needs_input_grad(size_t output_edge_index) const {
  const std::shared_ptr<Node> node = node_.lock();
  if (!node) return false;  // nothing was recorded: no input needs a gradient
  const std::vector<Edge>& edges = node->next_edges();
  TANDEM_CHECK(output_edge_index < edges.size(),
               name_,
               ": needs_input_grad(",
               output_edge_index,
               ") but forward has ",
               edges.size(),
               " tensor inputs");
  const Edge& edge = edges[output_edge_index];
  if (!edge.valid()) return false;
  // Inside autograd::grad, only the edges towards a requested input count.
  const detail::GraphTask* task = detail::current_task();
  if (task == nullptr || task->accumulate) return true;
  Node* next = edge.node.get();
  return task->needed.count(next) > 0 || task->captures.count(next) > 0;
}

}  // namespace tandem::autograd
