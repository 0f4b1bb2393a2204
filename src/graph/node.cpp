#include "tandem/graph/node.h"

#include <algorithm>
#include <atomic>

#include "core/memory_ownership.h"
#include "tandem/graph/grad_mode.h"

namespace tandem::autograd {
namespace {

std::atomic<uint64_t> next_sequence_nr{0};

// The node whose formula this thread is running: a saved output unpacked
// under create_graph gets it as its grad_fn.
thread_local Node* running_node = nullptr;

class RunningNodeScope {
 public:
  explicit RunningNodeScope(Node* node) : previous_(running_node) { running_node = node; }
  ~RunningNodeScope() { running_node = previous_; }
  RunningNodeScope(const RunningNodeScope&) = delete;
  RunningNodeScope& operator=(const RunningNodeScope&) = delete;

 private:
  Node* previous_;
};

// A fresh tensor on `data`'s memory whose gradient flows to `node`.
Tensor with_history(const Tensor& data, std::shared_ptr<Node> node, uint32_t output_nr) {
  Tensor t = data.detach();
  set_history(t, node, output_nr);
  return t;
}
std::atomic<size_t> next_hook_id{1};

// Runs a tensor hook; a defined result replaces the gradient, and must be
// a gradient for the same tensor.
void apply_hook(const TensorHook& hook, Tensor& g) {
  Tensor replaced = hook(g);
  if (!replaced.defined()) return;
  TANDEM_CHECK(replaced.sizes() == g.sizes() && replaced.device() == g.device(),
               "hook: a tensor hook returned a gradient of shape ",
               replaced.sizes(),
               " on ",
               replaced.device(),
               " for a gradient of shape ",
               g.sizes(),
               " on ",
               g.device());
  g = std::move(replaced);
}

}  // namespace

size_t new_hook_id() { return next_hook_id.fetch_add(1); }

Node::Node() : sequence_nr_(next_sequence_nr.fetch_add(1)) {}

// Note [Deep graph deletion]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A node owns its next nodes through its edges, so dropping the last
// handle to a chain of N nodes would run N nested destructors and overflow
// the stack for long chains (an RNN unrolled over many steps, a loop of
// small ops). Instead, the nodes this one solely owns are moved onto a
// local stack and released one by one, each after its own solely-owned
// successors have been moved off it.
Node::~Node() {
  std::vector<std::shared_ptr<Node>> pending;
  auto take_sole_successors = [&pending](std::vector<Edge>& edges) {
    for (Edge& e : edges) {
      if (e.node && e.node.use_count() == 1) pending.push_back(std::move(e.node));
    }
  };
  take_sole_successors(next_edges_);
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    take_sole_successors(node->next_edges_);
  }
}

void Node::add_output_meta(const Tensor& t) {
  output_meta_.push_back(TensorMeta{t.sizes(), t.dtype(), t.device()});
}

Device Node::device() const {
  return output_meta_.empty() ? Device(kCPU) : output_meta_.front().device;
}

size_t Node::add_pre_hook(uint32_t output_nr, TensorHook hook) {
  size_t id = new_hook_id();
  pre_hooks_.push_back(PreHook{id, output_nr, std::move(hook)});
  return id;
}

bool Node::remove_pre_hook(size_t id) {
  auto it = std::find_if(pre_hooks_.begin(), pre_hooks_.end(), [id](const PreHook& h) {
    return h.id == id;
  });
  if (it == pre_hooks_.end()) return false;
  pre_hooks_.erase(it);
  return true;
}

void Node::run_pre_hooks(tensor_list& grads) const {
  for (const PreHook& hook : pre_hooks_) {
    Tensor& g = grads.at(hook.output_nr);
    if (g.defined()) apply_hook(hook.fn, g);
  }
}

tensor_list FunctionNode::apply(tensor_list&& grads) {
  TANDEM_CHECK(fn_ != nullptr,
               "backward: trying to backward through the ",
               "graph a second time (the saved tensors of ",
               name_,
               " were freed after the first backward); pass ",
               "retain_graph=true to the first backward to keep them");
  RunningNodeScope running(this);
  return fn_(grads);
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> leaf)
    : leaf_(std::move(leaf)) {
  add_output_meta(Tensor(leaf_));
}

tensor_list AccumulateGrad::apply(tensor_list&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  AutogradMeta& meta = leaf_->autograd();
  for (const auto& [id, hook] : meta.hooks) apply_hook(hook, g);
  if (GradMode::is_enabled()) {
    // create_graph: .grad keeps the history of the gradient, so it can be
    // differentiated again; sums are out of place for the same reason.
    meta.grad =
        !meta.grad.defined() ? (g.requires_grad() ? g : g.clone()) : meta.grad + g;
  } else if (!meta.grad.defined()) {
    // A gradient nothing else holds becomes .grad as it is, as in PyTorch;
    // one that may be shared with other parts of the graph (the output of
    // a hook, say) is copied.
    const bool unshared = tandem::detail::holds_memory_alone(g) && !g.requires_grad();
    meta.grad = unshared ? std::move(g) : g.clone();
  } else {
    meta.grad.add_(g);
  }
  if (!meta.post_accumulate_hooks.empty()) {
    const Tensor leaf(leaf_);
    for (const auto& [id, hook] : meta.post_accumulate_hooks) hook(leaf);
  }
  return {};
}

SavedVariable::SavedVariable(const Tensor& t, bool is_output, uint32_t output_nr) {
  if (!t.defined()) return;
  data_ = t.detach();
  saved_version_ = t._version();
  if (is_output) {
    is_output_ = true;
    output_nr_ = output_nr;
  } else if (t.requires_grad()) {
    if (t.is_leaf()) {
      leaf_ = t.impl_ptr();
    } else {
      grad_fn_ = t.grad_fn();
      output_nr_ = t.unsafe_impl()->autograd().output_nr;
    }
  }
}

Tensor SavedVariable::unpack(const char* node_name) const {
  if (!data_.defined()) return data_;
  TANDEM_CHECK(data_._version() == saved_version_,
               node_name,
               ": a tensor saved for backward (shape ",
               data_.sizes(),
               ", ",
               data_.dtype(),
               ") was modified by an in-place operation ",
               "after it was saved (now at version ",
               data_._version(),
               ", saved at version ",
               saved_version_,
               "); clone it before the in-place change, or make the change ",
               "out of place");
  if (!GradMode::is_enabled()) return data_;
  if (leaf_) return Tensor(leaf_);
  if (grad_fn_) return with_history(data_, grad_fn_, output_nr_);
  if (is_output_ && running_node != nullptr) {
    return with_history(data_, running_node->shared_from_this(), output_nr_);
  }
  return data_;
}

// Note [Double backward]
// ~~~~~~~~~~~~~~~~~~~~~~
// With create_graph the engine runs every formula with grad mode on, so
// the ops a formula uses record a graph of their own, against the saved
// tensors' histories (SavedVariable::unpack) and the incoming gradients.
// Most formulas are written with differentiable ops and need nothing
// more. Those that call fused kernels (activations, softmax, conv2d,
// pooling, normalisation, nll_loss) take a recorded variant under grad
// mode: the same formula in recorded ops, or, for a formula linear in g,
// the kernel's result with the forward op recorded as its backward (the
// adjoint of the adjoint). The op table (tests/consistency) checks every
// recorded variant against its kernel and by gradgradcheck.

bool any_requires_grad(std::initializer_list<const Tensor*> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : inputs) {
    if (t->defined() && t->requires_grad()) return true;
  }
  return false;
}

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs) {
    if (t.defined() && t.requires_grad()) return true;
  }
  return false;
}

Edge gradient_edge(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  AutogradMeta& meta = t.unsafe_impl()->autograd();
  if (meta.grad_fn) return Edge{meta.grad_fn, meta.output_nr};
  std::shared_ptr<Node> acc = meta.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    meta.grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  AutogradMeta& meta = t.unsafe_impl()->autograd();
  meta.requires_grad = true;
  meta.grad_fn = node;
  meta.output_nr = output_nr;
}

std::shared_ptr<Node> record_function(std::string name,
                                      const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor*>& outputs,
                                      BackwardFn fn) {
  if (!any_requires_grad(inputs)) return nullptr;
  auto node = std::make_shared<FunctionNode>(std::move(name), std::move(fn));
  std::vector<Edge> edges;
  edges.reserve(inputs.size());
  for (const Tensor& t : inputs) edges.push_back(gradient_edge(t));
  node->set_next_edges(std::move(edges));
  for (uint32_t i = 0; i < outputs.size(); ++i) {
    node->add_output_meta(*outputs[i]);
    set_history(*outputs[i], node, i);
  }
  return node;
}

void check_inplace(const Tensor& t, const char* op, bool reads_self) {
  if (!GradMode::is_enabled()) return;
  // See Note [Writing through a view].
  if (t.is_view()) {
    const Tensor base = t._base();
    if (base.requires_grad()) {
      TANDEM_CHECK(!base.is_leaf(),
                   op,
                   ": a view of a leaf tensor that requires grad is being used in an "
                   "in-place operation (the view has shape ",
                   t.sizes(),
                   ", the leaf ",
                   base.sizes(),
                   "); do it under tandem::NoGradGuard, or on a clone");
      TANDEM_CHECK(base.is_contiguous(),
                   op,
                   ": in-place modification of a view (shape ",
                   t.sizes(),
                   ") of a non-contiguous tensor that requires grad (shape ",
                   base.sizes(),
                   ") is not supported; clone the view first");
      TANDEM_CHECK(!reads_self || (t.requires_grad() &&
                                   t.unsafe_impl()->view_version() == t._version()),
                   op,
                   ": this view (shape ",
                   t.sizes(),
                   ") does not carry its base's current history (it was made under "
                   "NoGradGuard, before the base required grad, or before the base "
                   "was last modified in place); take the view again");
    }
  }
  if (!t.requires_grad()) return;
  TANDEM_CHECK(!t.is_leaf(),
               op,
               ": a leaf tensor that requires grad (shape ",
               t.sizes(),
               ") cannot be modified in place; do it under ",
               "tandem::NoGradGuard, or on a clone");
}

}  // namespace tandem::autograd
