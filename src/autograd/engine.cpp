#include "tandem/autograd/engine.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <tuple>

#include "autograd/graph_task.h"
#include "tandem/core/device_work_time.h"
#include "tandem/core/executor.h"
#include "tandem/core/warning.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/ops/factory.h"

namespace tandem::autograd {
namespace {

using detail::GraphTask;

// Note [Engine scheduling]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// A node runs once every edge into it from the part of the graph reachable
// from the roots has delivered its gradient (dependency counting), so each
// node runs exactly once and sees the sum of its gradients. Among ready
// nodes the most recently created runs first, as in PyTorch, which keeps
// memory low on long chains.
//
// A graph whose nodes all live on one device runs on the calling thread.
// A graph spanning several devices (DataParallel replicas, models split
// over devices) runs each node on its device's executor thread, one ready
// queue per device, so the replicas' backward passes run at the same time
// and each device's nodes (its AccumulateGrads included) never run
// concurrently with each other. The caller waits for the last node.

// Runs one device's ready queue until it is empty (on that device's
// executor thread). After an error, queued nodes are dropped unrun.
void drain(const std::shared_ptr<GraphTask>& task, Device device) {
  // Formulas build graphs of their own only under create_graph.
  AutoGradMode grad_mode(task->create_graph);
  for (;;) {
    Node* node = nullptr;
    tensor_list grads;
    bool failed = false;
    {
      std::lock_guard<std::mutex> lock(task->mutex);
      detail::ReadyQueue& queue = task->queues[device];
      if (queue.nodes.empty()) {
        queue.scheduled = false;
        return;
      }
      std::tie(node, grads) = detail::take_ready(*task, queue);
      failed = task->error != nullptr;
    }
    tensor_list outputs;
    if (!failed) {
      try {
        tandem::detail::DeviceWorkScope work(device);
        outputs = detail::evaluate(*task, node, std::move(grads));
      } catch (...) {
        // Straight into the task: a local exception_ptr released after the
        // caller woke would free the exception on this thread, unordered
        // with the caller's use of it.
        std::lock_guard<std::mutex> lock(task->mutex);
        if (!task->error) task->error = std::current_exception();
      }
    }
    std::lock_guard<std::mutex> lock(task->mutex);
    if (!task->error) {
      try {
        for (Device d : detail::deliver(*task, node, outputs)) {
          Executor::of(d).submit([task, d] { drain(task, d); });
        }
      } catch (...) {
        task->error = std::current_exception();
      }
    }
    // This node's tensors go before the caller can wake: once backward()
    // returns, nothing of the pass is alive on the device threads.
    outputs.clear();
    if (--task->outstanding == 0) task->finished.notify_all();
  }
}

void run_on_calling_thread(GraphTask& task) {
  AutoGradMode grad_mode(task.create_graph);
  detail::ReadyQueue& queue = task.queues[Device(kCPU)];
  while (!queue.nodes.empty()) {
    auto [node, grads] = detail::take_ready(task, queue);
    tensor_list outputs = detail::evaluate(task, node, std::move(grads));
    detail::deliver(task, node, outputs);
  }
}

// Every node has run: the callbacks queued during the pass, in order (a
// callback may queue another).
void run_final_callbacks(GraphTask& task) {
  for (size_t i = 0;; ++i) {
    std::function<void()> callback;
    {
      std::lock_guard<std::mutex> lock(task.mutex);
      if (i == task.final_callbacks.size()) return;
      callback = std::move(task.final_callbacks[i]);
    }
    callback();
  }
}

void run(const std::shared_ptr<GraphTask>& task,
         const std::vector<Edge>& roots,
         const tensor_list& root_grads) {
  detail::compute_dependencies(*task, roots);
  if (!task->accumulate) detail::compute_needed(*task, roots);
  task->threaded = task->devices.size() > 1 && !in_executor_thread();
  std::vector<Device> to_schedule;
  {
    std::lock_guard<std::mutex> lock(task->mutex);
    for (size_t i = 0; i < roots.size(); ++i) {
      Node* node = roots[i].node.get();
      tensor_list& buffer = task->nodes.at(node).buffer;
      buffer.resize(node->output_meta().size());
      Tensor& slot = buffer[roots[i].input_nr];
      slot = slot.defined() ? slot + root_grads[i] : root_grads[i];
    }
    std::vector<Node*> queued;  // roots are few: a list is enough
    for (const Edge& e : roots) {
      Node* node = e.node.get();
      if (task->nodes.at(node).dependencies == 0 &&
          std::find(queued.begin(), queued.end(), node) == queued.end()) {
        queued.push_back(node);
        detail::enqueue(*task, node, to_schedule);
      }
    }
  }
  if (!task->threaded) {
    run_on_calling_thread(*task);
  } else {
    for (Device d : to_schedule) Executor::of(d).submit([task, d] { drain(task, d); });
    std::unique_lock<std::mutex> lock(task->mutex);
    task->finished.wait(lock, [&] { return task->outstanding == 0; });
    if (task->error) std::rethrow_exception(task->error);
  }
  run_final_callbacks(*task);
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
              std::optional<bool> retain_graph,
              bool create_graph) {
  tensor_list root_grads;
  std::vector<Edge> edges = prepare_roots("backward", roots, grad_roots, root_grads);
  static std::once_flag cycle_warning;
  if (create_graph) {
    std::call_once(cycle_warning, [] {
      warn(
          "backward(create_graph=true) makes each leaf's .grad hold a graph that leads "
          "back to the leaf, a reference cycle that keeps both alive until .grad is "
          "reset (zero_grad(), or set_grad(Tensor())); autograd::grad(..., "
          "create_graph=true) "
          "returns the gradients instead and has no such cycle");
    });
  }
  auto task = std::make_shared<GraphTask>();
  task->retain_graph = retain_graph.value_or(create_graph);
  task->create_graph = create_graph;
  run(task, edges, root_grads);
}

tensor_list grad(const tensor_list& outputs,
                 const tensor_list& inputs,
                 const tensor_list& grad_outputs,
                 std::optional<bool> retain_graph,
                 bool create_graph,
                 bool allow_unused) {
  tensor_list root_grads;
  std::vector<Edge> edges = prepare_roots("grad", outputs, grad_outputs, root_grads);
  auto task = std::make_shared<GraphTask>();
  task->accumulate = false;
  task->retain_graph = retain_graph.value_or(create_graph);
  task->create_graph = create_graph;
  task->captured.resize(inputs.size());
  std::vector<Edge> input_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    TANDEM_CHECK(inputs[i].defined() && inputs[i].requires_grad(),
                 "grad: input ",
                 i,
                 " does not require grad");
    Edge e = gradient_edge(inputs[i]);
    task->captures[e.node.get()].emplace_back(e.input_nr, i);
    input_edges.push_back(std::move(e));  // keeps accumulators alive
  }
  run(task, edges, root_grads);
  for (size_t i = 0; i < inputs.size(); ++i) {
    TANDEM_CHECK(allow_unused || task->captured[i].defined(),
                 "grad: input ",
                 i,
                 " (shape ",
                 inputs[i].sizes(),
                 ") was not used to compute ",
                 "the outputs; pass allow_unused=true if this is intended");
  }
  return task->captured;
}

void queue_callback(std::function<void()> callback) {
  GraphTask* task = detail::current_task();
  TANDEM_CHECK(task != nullptr,
               "queue_callback: no backward pass is running on this thread (call it "
               "from a hook during backward)");
  std::lock_guard<std::mutex> lock(task->mutex);
  task->final_callbacks.push_back(std::move(callback));
}

}  // namespace tandem::autograd

namespace tandem {

void Tensor::backward(const Tensor& gradient,
                      std::optional<bool> retain_graph,
                      bool create_graph) const {
  autograd::backward(
      {*this},
      gradient.defined() ? autograd::tensor_list{gradient} : autograd::tensor_list{},
      retain_graph,
      create_graph);
}

}  // namespace tandem
