#include "tandem/autograd/engine.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <tuple>

#include "autograd/graph_task.h"
#include "core/spin_wait.h"
#include "core/work_as_device.h"
#include "tandem/core/device_guard.h"
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
// over devices) runs each device's nodes on one thread at a time, one
// ready queue per device, so the replicas' backward passes run at the
// same time and each device's nodes (its AccumulateGrads included) never
// run concurrently with each other. The calling thread is the worker of
// its current device when that is a CPU device of the graph (usually
// cpu:0, where the loss is): it drains that device's queue itself, as the
// device's executor would (detail::WorkAsDeviceScope: a busy device of the
// core budget, the device current, and that device's executor never asked
// to help), and waits only while the queue is empty, first watching for
// work for a moment (Note [Spin before sleeping]) as an idle executor
// does. Handing that queue to the executor and sleeping until the last
// node cost a wake-up of each thread per pass, at the start and at the
// end. The other devices' queues run on their executor threads; the
// caller's queue stays marked scheduled, so nodes made ready there by
// other threads wake the caller instead of an executor. The caller
// returns after the last node.

// Runs one device's ready queue until it is empty (on that device's
// executor thread, or on the caller for its own queue). After an error,
// queued nodes are dropped unrun. An executor gives the queue up when it
// is empty (`scheduled` false, so the next node is handed to it afresh);
// the caller keeps it.
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
        if (&queue != task->caller_queue) queue.scheduled = false;
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
    const bool work_for_caller = task->caller_queue != nullptr &&
                                 &task->queues[device] != task->caller_queue &&
                                 !task->caller_queue->nodes.empty();
    // This node's tensors go before the caller can wake: once backward()
    // returns, nothing of the pass is alive on the device threads.
    outputs.clear();
    if (--task->outstanding == 0 || work_for_caller) {
      task->wakeups.fetch_add(1, std::memory_order_release);
      task->finished.notify_all();
    }
  }
}

// The caller's part of a threaded pass: its own device's queue, whenever
// it has nodes, until no node is left anywhere.
void work_on_calling_thread(const std::shared_ptr<GraphTask>& task, Device device) {
  for (;;) {
    const uint64_t seen = task->wakeups.load(std::memory_order_acquire);
    {
      std::unique_lock<std::mutex> lock(task->mutex);
      if (task->outstanding == 0) return;
      if (task->caller_queue->nodes.empty()) {
        lock.unlock();
        tandem::detail::spin_until(
            [&] { return task->wakeups.load(std::memory_order_acquire) != seen; });
        lock.lock();
        task->finished.wait(lock, [&] {
          return task->outstanding == 0 || !task->caller_queue->nodes.empty();
        });
        if (task->outstanding == 0) return;
      }
    }
    // Counted as a busy device only while there is work: a caller waiting
    // for other devices leaves them the whole budget, as an idle executor
    // does.
    const tandem::detail::WorkAsDeviceScope worker(device);
    drain(task, device);
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
  const Device caller = current_device();
  std::vector<Device> to_schedule;
  {
    std::lock_guard<std::mutex> lock(task->mutex);
    if (task->threaded && caller.is_cpu() && task->devices.contains(caller)) {
      task->caller_queue = &task->queues[caller];
      task->caller_queue->scheduled = true;
    }
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
    if (task->caller_queue != nullptr) work_on_calling_thread(task, caller);
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
