// The non-template half of autograd::Function<T>::apply: the graph node a
// custom function leaves behind, how its outputs join the graph, and the
// checks on what the user's backward returns.
#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <mutex>

#include "tandem/autograd/function.h"
#include "tandem/core/warning.h"
#include "tandem/ops/elementwise.h"
#include "tandem/ops/factory.h"

namespace tandem::autograd::detail {

// Note [Custom function nodes]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A custom function's node is an ordinary FunctionNode whose formula owns
// the call's State: the AutogradContext, T::backward and what apply learnt
// about the arguments and outputs. So the context and every tensor it
// saved go when the formula goes: after a backward without retain_graph
// (release_variables), or with the graph. Nothing in the State points back
// at the node strongly: the context holds it weakly, tensors saved from
// the outputs are saved as outputs (SavedVariable finds their grad_fn when
// unpacked, see Note [Double backward]), and the lists given to mark_dirty
// and mark_non_differentiable are dropped once apply has read them.
//
// The engine fills the gradients of outputs that received none with zeros
// before a node runs. For set_materialize_grads(false) the node carries a
// pre-hook per output, which runs only for a gradient that arrived and
// notes it for this thread; the formula then hands backward undefined
// tensors in the other places. Hooks and formula run back to back on one
// thread, so the note cannot mix up two passes running at once; a note
// left by a pass that skipped the node (autograd::grad) can only make a
// later pass see zeros where it would have seen an undefined tensor.

struct CustomFunctionCall::State {
  AutogradContext ctx;
  BackwardFunction backward = nullptr;
  std::vector<bool> is_tensor_argument;  // one per argument of forward
  std::vector<TensorMeta> input_meta;    // one per tensor argument
  std::vector<bool> output_defined;      // one per output of forward
  // T::backward may change the context; two passes over a retained graph
  // may run this node at once.
  std::mutex backward_mutex;
};

namespace {

bool contains(const tensor_list& list, const Tensor& t) {
  for (const Tensor& x : list) {
    if (x.is_same(t)) return true;
  }
  return false;
}

// Whether a tensor of shape `from` broadcasts to shape `to`.
bool broadcasts_to(const IntList& from, const IntList& to) {
  if (from.size() > to.size()) return false;
  const size_t lead = to.size() - from.size();
  for (size_t d = 0; d < from.size(); ++d) {
    if (from[d] != 1 && from[d] != to[lead + d]) return false;
  }
  return true;
}

// ---- gradients that arrived (set_materialize_grads(false)) ----

struct Arrivals {
  const void* call = nullptr;  // whose outputs; only compared, never read
  std::vector<bool> arrived;
};
thread_local Arrivals arrivals;

void note_arrival(const void* call, size_t output, size_t outputs) {
  if (arrivals.call != call) {
    arrivals.call = call;
    arrivals.arrived.assign(outputs, false);
  }
  arrivals.arrived[output] = true;
}

// Which of `call`'s outputs got a gradient since the last take (none if
// its hooks did not run on this thread).
std::vector<bool> take_arrivals(const void* call, size_t outputs) {
  std::vector<bool> arrived(outputs, false);
  if (arrivals.call == call) arrived.swap(arrivals.arrived);
  arrivals.call = nullptr;
  return arrived;
}

// ---- what backward returned ----

// The gradient for tensor argument `arg` of forward, checked against that
// input; a gradient the input broadcasts to is summed down to it.
Tensor checked_gradient(const std::string& name,
                        size_t arg,
                        const TensorMeta& input,
                        const Tensor& g) {
  TANDEM_CHECK(g.is_floating_point(),
               name,
               ": backward returned a gradient of dtype ",
               g.dtype(),
               " at position ",
               arg,
               "; gradients are floating point (argument ",
               arg,
               " of forward is ",
               input.dtype,
               ")");
  TANDEM_CHECK(g.device() == input.device,
               name,
               ": backward returned a gradient on ",
               g.device(),
               " at position ",
               arg,
               " but argument ",
               arg,
               " of forward is on ",
               input.device);
  if (g.sizes() == input.sizes) return g;
  TANDEM_CHECK(broadcasts_to(input.sizes, g.sizes()),
               name,
               ": backward returned a gradient of shape ",
               g.sizes(),
               " at position ",
               arg,
               " but argument ",
               arg,
               " of forward has shape ",
               input.sizes);
  return sum_to(g, input.sizes);
}

// ---- marks and outputs ----

void check_marks(const std::string& name,
                 const tensor_list& inputs,
                 const tensor_list& outputs,
                 const tensor_list& dirty,
                 const tensor_list& non_differentiable) {
  for (const Tensor& t : dirty) {
    TANDEM_CHECK(t.defined() && contains(outputs, t),
                 name,
                 ": a tensor given to mark_dirty was not returned by forward; an "
                 "input that forward changes in place must also be one of its outputs");
    if (!contains(inputs, t)) {
      warn(tandem::detail::str(name,
                               ": mark_dirty was given a tensor (shape ",
                               t.sizes(),
                               ") that is not an input of forward; only inputs changed "
                               "in place need marking"));
    }
  }
  for (const Tensor& t : non_differentiable) {
    TANDEM_CHECK(t.defined() && contains(outputs, t),
                 name,
                 ": a tensor given to mark_non_differentiable was not returned by "
                 "forward; only outputs can be marked");
  }
}

// An input that forward changed in place takes over the output's place in
// the graph; refused where autograd could not follow the change.
void check_dirty_input(const std::string& name, const Tensor& t) {
  TANDEM_CHECK(!(t.is_leaf() && t.requires_grad()),
               name,
               ": forward changed in place (mark_dirty) a leaf tensor that requires "
               "grad (shape ",
               t.sizes(),
               "); change a clone of it instead");
  TANDEM_CHECK(!(t.is_view() && t._base().requires_grad()),
               name,
               ": forward changed in place (mark_dirty) a view (shape ",
               t.sizes(),
               ") of a tensor that requires grad; tandem cannot carry the change into "
               "the base's history, so pass the base itself, or a clone of the view");
}

// An output that gets no history: an input returned as it was comes back
// as an alias of it, so that the caller's input keeps its own state (as
// LibTorch's view_as does).
void keep_out_of_graph(Tensor& out, bool is_input, bool is_dirty) {
  if (is_input && (!is_dirty || out.requires_grad())) {
    out = out.detach();
  } else if (out.requires_grad() && !out.is_view()) {
    out.detach_();
  }
}

}  // namespace

std::string demangle(const char* mangled) {
  int status = 0;
  const std::unique_ptr<char, void (*)(void*)> readable(
      abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && readable ? std::string(readable.get()) : std::string(mangled);
}

CustomFunctionCall::CustomFunctionCall(std::string name, BackwardFunction backward)
    : state_(std::make_shared<State>()) {
  state_->ctx.name_ = std::move(name);
  state_->backward = backward;
}

CustomFunctionCall::~CustomFunctionCall() = default;

void CustomFunctionCall::add_tensor_argument(const Tensor& t) {
  state_->is_tensor_argument.push_back(true);
  state_->input_meta.push_back(t.defined() ? TensorMeta{t.sizes(), t.dtype(), t.device()}
                                           : TensorMeta{});
  inputs_.push_back(t);
}

void CustomFunctionCall::add_non_tensor_argument() {
  state_->is_tensor_argument.push_back(false);
}

AutogradContext* CustomFunctionCall::begin() {
  if (any_requires_grad(inputs_)) {
    node_ = std::make_shared<FunctionNode>(
        state_->ctx.name_,
        [state = state_](tensor_list& grads) { return run_backward(*state, grads); });
    std::vector<Edge> edges;
    edges.reserve(inputs_.size());
    for (const Tensor& t : inputs_) edges.push_back(gradient_edge(t));
    node_->set_next_edges(std::move(edges));
    state_->ctx.node_ = node_;
  }
  return &state_->ctx;
}

void CustomFunctionCall::finish(tensor_list& outputs) {
  AutogradContext& ctx = state_->ctx;
  check_marks(ctx.name_, inputs_, outputs, ctx.dirty_, ctx.non_differentiable_);
  // The change is in the data already; bumping once more also covers a
  // forward that wrote through data_ptr.
  for (const Tensor& t : ctx.dirty_) t.bump_version();

  for (uint32_t i = 0; i < outputs.size(); ++i) {
    Tensor& out = outputs[i];
    state_->output_defined.push_back(out.defined());
    if (!out.defined()) continue;
    const bool is_input = contains(inputs_, out);
    const bool is_dirty = contains(ctx.dirty_, out);
    if (!node_ || !out.is_floating_point() || contains(ctx.non_differentiable_, out)) {
      keep_out_of_graph(out, is_input, is_dirty);
      continue;
    }
    if (is_dirty) {
      check_dirty_input(ctx.name_, out);
    } else if (is_input) {
      out = out.detach();
    }
    set_history(out, node_, i);
  }
  ctx.dirty_.clear();
  ctx.non_differentiable_.clear();
  if (!node_) {
    ctx.to_save_.clear();
    return;
  }

  // Outputs forward left undefined get a stand-in for the engine, on the
  // node's device; backward always sees an undefined gradient for them.
  Device device = Device(kCPU);
  for (const Tensor& t : outputs) {
    if (t.defined()) {
      device = t.device();
      break;
    }
  }
  for (const Tensor& out : outputs) {
    node_->add_output_meta(out.defined() ? out
                                         : empty({}, TensorOptions().device(device)));
  }

  for (const Tensor& t : ctx.to_save_) {
    const bool is_output = t.defined() && t.grad_fn() == node_;
    ctx.saved_variables_.emplace_back(
        t, is_output, is_output ? t.unsafe_impl()->autograd().output_nr : 0);
  }
  ctx.to_save_.clear();

  if (!ctx.materialize_grads_) {
    const size_t count = outputs.size();
    for (uint32_t i = 0; i < count; ++i) {
      node_->add_pre_hook(i, [call = state_.get(), i, count](const Tensor&) {
        note_arrival(call, i, count);
        return Tensor();
      });
    }
  }
}

tensor_list CustomFunctionCall::run_backward(State& state, tensor_list& grads) {
  AutogradContext& ctx = state.ctx;
  const std::vector<bool> arrived = take_arrivals(&state, grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!state.output_defined[i] || (!ctx.materialize_grads_ && !arrived[i])) {
      grads[i] = Tensor();
    }
  }
  tensor_list returned;
  {
    const std::lock_guard<std::mutex> lock(state.backward_mutex);
    returned = state.backward(&ctx, grads);
  }

  // LibTorch allows extra gradients past the last argument if undefined.
  const size_t arguments = state.is_tensor_argument.size();
  while (returned.size() > arguments && !returned.back().defined()) returned.pop_back();
  TANDEM_CHECK(returned.size() == arguments,
               ctx.name_,
               ": backward must return one gradient per argument of forward (",
               arguments,
               "), got ",
               returned.size(),
               "; return an undefined Tensor for a non-tensor argument or an input "
               "that needs no gradient");

  const std::shared_ptr<Node> node = ctx.node_.lock();
  TANDEM_INTERNAL_ASSERT(node != nullptr, ctx.name_, ": backward ran without its node");
  const std::vector<Edge>& edges = node->next_edges();
  tensor_list input_grads;  // one per tensor argument (next edge)
  input_grads.reserve(edges.size());
  for (size_t arg = 0; arg < arguments; ++arg) {
    const Tensor& g = returned[arg];
    if (!state.is_tensor_argument[arg]) {
      TANDEM_CHECK(!g.defined(),
                   ctx.name_,
                   ": backward returned a defined gradient at position ",
                   arg,
                   " but argument ",
                   arg,
                   " of forward is not a tensor; return an undefined Tensor there");
      continue;
    }
    const size_t input = input_grads.size();
    const bool wanted = edges[input].valid() && g.defined();
    input_grads.push_back(
        wanted ? checked_gradient(ctx.name_, arg, state.input_meta[input], g) : Tensor());
  }
  return input_grads;
}

}  // namespace tandem::autograd::detail
