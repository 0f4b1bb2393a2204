// Autograd graph nodes.
//
// Each differentiable op that ran with grad mode on leaves a Node behind: it
// knows how to turn the gradients of the op's outputs into gradients of its
// inputs (apply), and where those go next (next_edges). Leaves get an
// AccumulateGrad node that adds into .grad. Ops build nodes through
// record_function, which takes the backward formula as a lambda:
//
//   Tensor out = ...;  // forward result
//   autograd::record_function("ExpBackward", {x}, {&out},
//       [saved = autograd::SavedVariable(out)](const tensor_list& g) {
//         return tensor_list{g[0] * saved.unpack("ExpBackward")};
//       });
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tandem/core/tensor.h"

namespace tandem::autograd {

using tensor_list = std::vector<Tensor>;
class Node;

/// Where one gradient goes: input `input_nr` of `node`. An edge without a
/// node means "this input needs no gradient".
struct Edge {
  std::shared_ptr<Node> node;
  uint32_t input_nr = 0;
  bool valid() const { return node != nullptr; }
};

/// Shape, dtype and device of one forward output, so a missing gradient can
/// be filled with zeros and a wrong-shaped one is caught.
struct TensorMeta {
  IntList sizes;
  ScalarType dtype = kFloat32;
  Device device = Device(kCPU);
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  /// Frees the graph behind this node without recursing once per node, so
  /// long chains cannot overflow the stack. See Note [Deep graph deletion].
  virtual ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  /// Gradients w.r.t. the forward outputs in, gradients w.r.t. the forward
  /// inputs out (one per next edge; undefined where none is needed).
  virtual tensor_list apply(tensor_list&& grads) = 0;
  virtual std::string name() const = 0;
  /// Frees saved tensors after a backward without retain_graph.
  virtual void release_variables() {}

  const std::vector<Edge>& next_edges() const { return next_edges_; }
  void set_next_edges(std::vector<Edge> edges) { next_edges_ = std::move(edges); }
  const std::vector<TensorMeta>& output_meta() const { return output_meta_; }
  void add_output_meta(const Tensor& t);
  /// Creation order; the engine runs later nodes first, like PyTorch.
  uint64_t sequence_nr() const { return sequence_nr_; }
  /// The device of this node's work (its first output's device).
  Device device() const;

  /// Hooks on the gradient of forward output `output_nr` (tensor hooks of
  /// non-leaf tensors). They run before apply, in registration order.
  size_t add_pre_hook(uint32_t output_nr, TensorHook hook);
  bool remove_pre_hook(size_t id);
  void run_pre_hooks(tensor_list& grads) const;

 private:
  struct PreHook {
    size_t id;
    uint32_t output_nr;
    TensorHook fn;
  };
  std::vector<Edge> next_edges_;
  std::vector<TensorMeta> output_meta_;
  std::vector<PreHook> pre_hooks_;
  uint64_t sequence_nr_;
};

/// A backward formula. The gradients are its own: it may move them out
/// (a reduction can then write into one of them); most take them as const.
using BackwardFn = std::function<tensor_list(tensor_list& grads)>;

/// A node whose backward formula is a lambda (what every op records).
class FunctionNode final : public Node {
 public:
  FunctionNode(std::string name, BackwardFn fn)
      : name_(std::move(name)), fn_(std::move(fn)) {}
  tensor_list apply(tensor_list&& grads) override;
  std::string name() const override { return name_; }
  void release_variables() override { fn_ = nullptr; }

 private:
  std::string name_;
  BackwardFn fn_;
};

/// Adds incoming gradients into a leaf's .grad (after the leaf's hooks).
class AccumulateGrad final : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> leaf);
  tensor_list apply(tensor_list&& grads) override;
  std::string name() const override { return "AccumulateGrad"; }
  const std::shared_ptr<TensorImpl>& leaf() const { return leaf_; }

 private:
  std::shared_ptr<TensorImpl> leaf_;
};

/// A tensor kept for backward. unpack() refuses it if an in-place op changed
/// it after it was saved, naming the node that needed it.
///
/// Under create_graph (grad mode on while the engine runs a formula),
/// unpack() gives the tensor back with its history, so the formula's ops
/// are recorded against it and can be differentiated again: a leaf comes
/// back as itself, a non-leaf with the grad_fn it had when saved, and an
/// output of the saving node (`is_output`: saved before the node existed)
/// with that node as its grad_fn. Otherwise unpack() returns a plain
/// detached tensor, as cheap as before. See Note [Double backward].
class SavedVariable {
 public:
  SavedVariable() = default;
  explicit SavedVariable(const Tensor& t, bool is_output = false, uint32_t output_nr = 0);
  Tensor unpack(const char* node_name) const;
  bool defined() const { return data_.defined(); }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  // Where data_'s gradient went when it was saved (see the class comment).
  std::shared_ptr<TensorImpl> leaf_;
  std::shared_ptr<Node> grad_fn_;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
};

/// Whether an op on these inputs must record history.
bool any_requires_grad(std::initializer_list<const Tensor*> inputs);
bool any_requires_grad(const std::vector<Tensor>& inputs);

/// The edge a gradient for `t` flows along (its grad_fn, or its leaf's
/// accumulator; invalid if it does not require grad).
Edge gradient_edge(const Tensor& t);

/// Records `fn` as the backward of an op from `inputs` to `outputs`: makes
/// the node, links it to the inputs and marks the outputs as its results.
/// Returns the node; does nothing (returns null) if no input requires grad
/// or grad mode is off.
std::shared_ptr<Node> record_function(std::string name,
                                      const std::vector<Tensor>& inputs,
                                      const std::vector<Tensor*>& outputs,
                                      BackwardFn fn);

/// Makes `t` the output `output_nr` of `node` (in-place ops rebase history
/// this way).
void set_history(const Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr);

/// A fresh id for a tensor hook (unique across nodes and leaves).
size_t new_hook_id();

/// Refuses an in-place op on `t` that autograd could not follow (with grad
/// mode on): a leaf that requires grad, a view of one, a view of a
/// non-contiguous tensor that requires grad, and, for an op that reads t's
/// old values (`reads_self`: all but copy_ and fill_), a view that does not
/// carry its base's current history. See Note [Writing through a view].
void check_inplace(const Tensor& t, const char* op, bool reads_self = true);

}  // namespace tandem::autograd
