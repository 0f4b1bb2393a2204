#include "tandem/autograd/engine.h"

#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tandem/autograd/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::autograd {
namespace {

// Note [Engine scheduling]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A node runs once every edge into it from the part of the graph reachable
// from the roots has delivered its gradient (dependency counting), so each
// node runs exactly once and sees the sum of its gradients. Among ready
// nodes the most recently created runs first, as in PyTorch, which keeps
// memory low on long chains. The engine is the only owner of a GraphTask;
// nodes never see it.

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

struct GraphTask {
  std::unordered_map<Node*, int> dependencies;
  std::unordered_map<Node*, tensor_list> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> ready;
  // autograd::grad: where to capture each requested input's gradient.
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  tensor_list captured;
  bool accumulate = true;
  bool retain_graph = false;
  // Nodes that lead to a captured input (grad mode only); others are skipped.
  std::unordered_set<Node*> needed;
};

void accumulate_into(tensor_list& buffer, uint32_t index, const Tensor& g) {
  Tensor& slot = buffer.at(index);
  if (!slot.defined()) {
    slot = g;
  } else {
    slot = slot + g;
  }
}

// Counts, for every node reachable from `roots`, how many edges enter it.
void compute_dependencies(GraphTask& task, const std::vector<Edge>& roots) {
  std::vector<Node*> stack;
  std::unordered_set<Node*> seen;
  for (const Edge& e : roots) {
    if (seen.insert(e.node.get()).second) stack.push_back(e.node.get());
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    for (const Edge& next : node->next_edges()) {
      if (!next.valid()) continue;
      ++task.dependencies[next.node.get()];
      if (seen.insert(next.node.get()).second) stack.push_back(next.node.get());
    }
  }
}

// Marks the nodes from which some captured node can be reached. A
// post-order walk with an explicit stack: graphs can be far deeper than
// the call stack.
void compute_needed(GraphTask& task, const std::vector<Edge>& roots) {
  std::unordered_map<Node*, bool> needed_of;    // filled once a node is finished
  std::vector<std::pair<Node*, size_t>> stack;  // node, next edge to look at
  for (const Edge& root : roots) {
    if (!needed_of.count(root.node.get())) stack.emplace_back(root.node.get(), 0);
    while (!stack.empty()) {
      Node* node = stack.back().first;
      const std::vector<Edge>& edges = node->next_edges();
      size_t& next = stack.back().second;
      if (next < edges.size()) {
        Node* child = edges[next++].node.get();
        // The graph is acyclic, so an unfinished child is not on the stack.
        if (child != nullptr && !needed_of.count(child)) stack.emplace_back(child, 0);
        continue;
      }
      bool needed = task.captures.count(node) > 0;
      for (const Edge& e : edges)
        needed = needed || (e.valid() && needed_of.at(e.node.get()));
      needed_of[node] = needed;
      if (needed) task.needed.insert(node);
      stack.pop_back();
    }
  }
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

void run(GraphTask& task, const std::vector<Edge>& roots, const tensor_list& root_grads) {
  compute_dependencies(task, roots);
  if (!task.accumulate) compute_needed(task, roots);
  for (size_t i = 0; i < roots.size(); ++i) {
    Node* node = roots[i].node.get();
    tensor_list& buffer = task.buffers[node];
    buffer.resize(node->output_meta().size());
    accumulate_into(buffer, roots[i].input_nr, root_grads[i]);
  }
  std::unordered_set<Node*> queued;
  for (const Edge& e : roots) {
    Node* node = e.node.get();
    if (task.dependencies[node] == 0 && queued.insert(node).second) {
      task.ready.push(node);
    }
  }
  // Without grad mode, backward formulas do not build a graph of their own.
  NoGradGuard no_grad;
  while (!task.ready.empty()) {
    Node* node = task.ready.top();
    task.ready.pop();
    tensor_list grads = std::move(task.buffers[node]);
    task.buffers.erase(node);
    grads.resize(node->output_meta().size());
    node->run_pre_hooks(grads);
    if (auto it = task.captures.find(node); it != task.captures.end()) {
      for (auto [input_nr, slot] : it->second) task.captured[slot] = grads[input_nr];
    }
    bool skip = !task.accumulate && !task.needed.count(node);
    if (skip) continue;
    if (!task.accumulate && dynamic_cast<AccumulateGrad*>(node)) continue;
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
      const Edge& edge = edges[i];
      if (!edge.valid()) continue;
      Node* next = edge.node.get();
      if (outputs[i].defined()) {
        Tensor g = validate_gradient(*node, edge, std::move(outputs[i]));
        tensor_list& buffer = task.buffers[next];
        buffer.resize(next->output_meta().size());
        accumulate_into(buffer, edge.input_nr, g);
      }
      if (--task.dependencies[next] == 0) task.ready.push(next);
    }
  }
}

// Root edges and their starting gradients, with PyTorch's checks.
std::vector<Edge> prepare_roots(const char* op,
                                const tensor_list& roots,
                                const tensor_list& grad_roots,
                                tensor_list& root_grads) {
  TANDEM_CHECK(grad_roots.empty() || grad_roots.size() == roots.size(),
               op,
               ": got ",
               grad_roots.size(),
               " gradients for ",
               roots.size(),
               " tensors");
  std::vector<Edge> edges;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    TANDEM_CHECK(root.defined(), op, ": tensor ", i, " is undefined");
    TANDEM_CHECK(root.requires_grad(),
                 op,
                 ": tensor ",
                 i,
                 " does not require grad and has no grad_fn (shape ",
                 root.sizes(),
                 "); nothing to differentiate");
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      TANDEM_CHECK(root.numel() == 1,
                   op,
                   ": a gradient must be given for a non-scalar tensor (shape ",
                   root.sizes(),
                   "); grad can be implicitly created only for ",
                   "scalar outputs");
      g = ones_like(root);
    } else {
      TANDEM_CHECK(g.sizes() == root.sizes(),
                   op,
                   ": gradient ",
                   i,
                   " has shape ",
                   g.sizes(),
                   " but the tensor has shape ",
                   root.sizes());
      TANDEM_CHECK(g.device() == root.device(),
                   op,
                   ": gradient ",
                   i,
                   " is on ",
                   g.device(),
                   " but the tensor is on ",
                   root.device());
      TANDEM_CHECK(g.dtype() == root.dtype(),
                   op,
                   ": gradient ",
                   i,
                   " has dtype ",
                   g.dtype(),
                   " but the tensor has dtype ",
                   root.dtype());
    }
    root_grads.push_back(g);
    edges.push_back(gradient_edge(root));
  }
  return edges;
}

}  // namespace

void backward(const tensor_list& roots,
              const tensor_list& grad_roots,
              bool retain_graph) {
  tensor_list root_grads;
  std::vector<Edge> edges = prepare_roots("backward", roots, grad_roots, root_grads);
  GraphTask task;
  task.retain_graph = retain_graph;
  run(task, edges, root_grads);
}

tensor_list grad(const tensor_list& outputs,
                 const tensor_list& inputs,
                 const tensor_list& grad_outputs,
                 bool retain_graph,
                 bool allow_unused) {
  tensor_list root_grads;
  std::vector<Edge> edges = prepare_roots("grad", outputs, grad_outputs, root_grads);
  GraphTask task;
  task.accumulate = false;
  task.retain_graph = retain_graph;
  task.captured.resize(inputs.size());
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TANDEM_CHECK(inputs[i].defined() && inputs[i].requires_grad(),
                 "grad: input ",
                 i,
                 " does not require grad");
    Edge e = gradient_edge(inputs[i]);
    task.captures[e.node.get()].emplace_back(e.input_nr, i);
    input_edges.push_back(std::move(e));  // keeps accumulators alive
  }
  run(task, edges, root_grads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TANDEM_CHECK(allow_unused || task.captured[i].defined(),
                 "grad: input ",
                 i,
                 " (shape ",
                 inputs[i].sizes(),
                 ") was not used to compute ",
                 "the outputs; pass allow_unused=true if this is intended");
  }
  return task.captured;
}

}  // namespace tandem::autograd
