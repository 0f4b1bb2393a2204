#include "autograd/graph_task.h"

#include "tandem/core/profiler.h"
#include "tandem/ops/factory.h"

namespace tandem::autograd::detail {
namespace {

void accumulate_into(tensor_list& buffer, uint32_t index, const Tensor& g) {
  Tensor& slot = buffer.at(index);
  slot = slot.defined() ? slot + g : g;
}

// Checks a gradient `from` produced for `edge` against the tensor it is
// for, and casts it to that tensor's dtype (as PyTorch's engine does), so
// a formula computing in a wider dtype cannot change the dtype of a .grad.
Tensor validate_gradient(const Node& from, const Edge& edge, Tensor g) {
  const auto& meta = edge.node->output_meta();
  TANDEM_INTERNAL_ASSERT(edge.input_nr < meta.size(),
                         from.name(),
                         " has an edge to a missing input of ",
                         edge.node->name());
  const TensorMeta& want = meta[edge.input_nr];
  TANDEM_INTERNAL_ASSERT(g.sizes() == want.sizes,
                         from.name(),
                         " returned a gradient of shape ",
                         g.sizes(),
                         " for a tensor of shape ",
                         want.sizes);
  TANDEM_CHECK(g.device() == want.device,
               "backward: ",
               from.name(),
               " produced a gradient on ",
               g.device(),
               " for a tensor on ",
               want.device);
  return g.dtype() == want.dtype ? g : g.to(want.dtype);
}

thread_local GraphTask* running_task = nullptr;

// Marks the task whose node this thread runs, for the node's hooks.
class RunningTaskScope {
 public:
  explicit RunningTaskScope(GraphTask* task) : previous_(running_task) {
    running_task = task;
  }
  ~RunningTaskScope() { running_task = previous_; }
  RunningTaskScope(const RunningTaskScope&) = delete;
  RunningTaskScope& operator=(const RunningTaskScope&) = delete;

 private:
  GraphTask* previous_;
};

}  // namespace

GraphTask* current_task() { return running_task; }

void compute_dependencies(GraphTask& task, const std::vector<Edge>& roots) {
  std::vector<Node*> stack;
  bool inserted = false;
  for (const Edge& e : roots) {
    task.nodes.find_or_insert(e.node.get(), inserted);
    if (inserted) stack.push_back(e.node.get());
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    task.devices.insert(node->device());
    for (const Edge& next : node->next_edges()) {
      if (!next.valid()) continue;
      ++task.nodes.find_or_insert(next.node.get(), inserted).dependencies;
      if (inserted) stack.push_back(next.node.get());
    }
  }
}

// A post-order walk with an explicit stack: graphs can be far deeper than
// the call stack.
void compute_needed(GraphTask& task, const std::vector<Edge>& roots) {
  std::unordered_map<Node*, bool> reaches_of;   // a capture, once the node is finished
  std::vector<std::pair<Node*, size_t>> stack;  // node, next edge to look at
  for (const Edge& root : roots) {
    if (!reaches_of.count(root.node.get())) stack.emplace_back(root.node.get(), 0);
    while (!stack.empty()) {
      Node* node = stack.back().first;
      const std::vector<Edge>& edges = node->next_edges();
      size_t& next = stack.back().second;
      if (next < edges.size()) {
        Node* child = edges[next++].node.get();
        // The graph is acyclic, so an unfinished child is not on the stack.
        if (child != nullptr && !reaches_of.count(child)) stack.emplace_back(child, 0);
        continue;
      }
      // A node runs only if a capture lies beyond it; a node that is
      // itself captured (the grad_fn of a requested non-leaf) is not run.
      bool leads_to_capture = false;
      for (const Edge& e : edges)
        leads_to_capture = leads_to_capture || (e.valid() && reaches_of.at(e.node.get()));
      reaches_of[node] = leads_to_capture || task.captures.count(node) > 0;
      if (leads_to_capture) task.needed.insert(node);
      stack.pop_back();
    }
  }
}

tensor_list evaluate(GraphTask& task, Node* node, tensor_list grads) {
  const profiler::Span span(
      "autograd", [node] { return node->name(); }, node->device());
  RunningTaskScope running(&task);
  grads.resize(node->output_meta().size());
  node->run_pre_hooks(grads);
  if (auto it = task.captures.find(node); it != task.captures.end()) {
    std::lock_guard<std::mutex> lock(task.mutex);
    for (auto [input_nr, slot] : it->second) task.captured[slot] = grads[input_nr];
  }
  if (!task.accumulate &&
      (!task.needed.count(node) || dynamic_cast<AccumulateGrad*>(node) != nullptr)) {
    return {};
  }
  // Fill gradients that never arrived (outputs unused downstream) with
  // zeros so every formula sees full inputs.
  for (size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) continue;
    const TensorMeta& m = node->output_meta()[i];
    grads[i] = zeros(m.sizes, TensorOptions(m.dtype).device(m.device));
  }
  tensor_list outputs = node->apply(std::move(grads));
  if (!task.retain_graph) node->release_variables();
  const auto& edges = node->next_edges();
  TANDEM_INTERNAL_ASSERT(outputs.size() == edges.size() || outputs.empty(),
                         node->name(),
                         " returned ",
                         outputs.size(),
                         " gradients for ",
                         edges.size(),
                         " inputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (edges[i].valid() && outputs[i].defined()) {
      outputs[i] = validate_gradient(*node, edges[i], std::move(outputs[i]));
    }
  }
  return outputs;
}

std::pair<Node*, tensor_list> take_ready(GraphTask& task, ReadyQueue& queue) {
  Node* node = queue.nodes.top();
  queue.nodes.pop();
  return {node, std::move(task.nodes.at(node).buffer)};
}

void enqueue(GraphTask& task, Node* node, std::vector<Device>& to_schedule) {
  ReadyQueue& queue = task.queue_for(node);
  queue.nodes.push(node);
  ++task.outstanding;
  if (!queue.scheduled) {
    queue.scheduled = true;
    to_schedule.push_back(task.threaded ? node->device() : Device(kCPU));
  }
}

std::vector<Device> deliver(GraphTask& task, Node* node, tensor_list& outputs) {
  std::vector<Device> to_schedule;
  const auto& edges = node->next_edges();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Edge& edge = edges[i];
    if (!edge.valid()) continue;
    Node* next = edge.node.get();
    NodeState& state = task.nodes.at(next);
    if (outputs[i].defined()) {
      state.buffer.resize(next->output_meta().size());
      accumulate_into(state.buffer, edge.input_nr, outputs[i]);
    }
    if (--state.dependencies == 0) enqueue(task, next, to_schedule);
  }
  return to_schedule;
}

}  // namespace tandem::autograd::detail
