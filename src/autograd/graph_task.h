// Private: the state of one backward pass (a GraphTask) and the steps the
// engine takes on it. engine.cpp schedules these steps, either on the
// calling thread or on the devices' executor threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "autograd/node_table.h"
#include "tandem/graph/node.h"

namespace tandem::autograd::detail {

struct ReadyOrder {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

struct ReadyQueue {
  std::priority_queue<Node*, std::vector<Node*>, ReadyOrder> nodes;
  bool scheduled = false;  // a drain of this queue is queued or running
};

struct GraphTask {
  // Fixed before execution starts.
  bool accumulate = true;  // backward(); false for autograd::grad()
  bool retain_graph = false;
  bool create_graph = false;  // formulas run with grad mode on
  bool threaded = false;      // nodes run on their devices' executor threads
  // When threaded, the queue the calling thread drains itself (that of
  // its current device), or null; it stays `scheduled`, so no executor is
  // handed its nodes (Note [Engine scheduling]).
  ReadyQueue* caller_queue = nullptr;
  // autograd::grad: where to capture each requested input's gradient.
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  // autograd::grad: nodes beyond which a captured input lies; others
  // (captured ones included) are skipped.
  std::unordered_set<Node*> needed;
  std::set<Device> devices;  // of every node in the graph

  // Guarded by mutex while the task runs.
  std::mutex mutex;
  std::condition_variable finished;
  // Bumped, under mutex, with each notify of `finished`: the caller
  // watches it for a moment before it sleeps (Note [Spin before sleeping]).
  std::atomic<uint64_t> wakeups{0};
  NodeTable nodes;  // every node of the graph (Note [One table for the pass])
  std::unordered_map<Device, ReadyQueue> queues;
  int64_t outstanding = 0;  // nodes queued or running
  tensor_list captured;
  std::exception_ptr error;
  // queue_callback(): run by the caller once every node has run.
  std::vector<std::function<void()>> final_callbacks;

  /// The queue a node waits in: its device's when threaded, else one queue.
  ReadyQueue& queue_for(Node* node) {
    return queues[threaded ? node->device() : Device(kCPU)];
  }
};

/// Counts, for every node reachable from `roots`, how many edges enter it,
/// and records the devices of those nodes.
void compute_dependencies(GraphTask& task, const std::vector<Edge>& roots);

/// Marks the nodes that must run: those beyond which a captured node lies.
void compute_needed(GraphTask& task, const std::vector<Edge>& roots);

/// The task whose node this thread is running (for queue_callback), or null.
GraphTask* current_task();

/// Runs `node` on its gradients (hooks, captures, zero-filling, apply) and
/// returns the gradients for its next edges (empty if it was skipped).
/// Takes task.mutex only for the captures.
tensor_list evaluate(GraphTask& task, Node* node, tensor_list grads);

/// Under task.mutex: adds `outputs` into the next nodes' buffers and queues
/// the nodes that became ready; returns the queues that got work and had no
/// drain scheduled (marked scheduled now).
std::vector<Device> deliver(GraphTask& task, Node* node, tensor_list& outputs);

/// Under task.mutex: takes the next node of `queue` (which must not be
/// empty) and the gradients gathered for it.
std::pair<Node*, tensor_list> take_ready(GraphTask& task, ReadyQueue& queue);

/// Under task.mutex: puts a ready node in its queue (counted outstanding).
void enqueue(GraphTask& task, Node* node, std::vector<Device>& to_schedule);

}  // namespace tandem::autograd::detail
