// Module: the base of every layer and model, as LibTorch's torch::nn::Module.
// A module owns named parameters, buffers and submodules, registered in
// order; everything else (to, train, state_dict, printing) walks that tree.
//
//   struct NetImpl : tandem::nn::Module {
//     NetImpl() { fc = register_module("fc", tandem::nn::Linear(784, 10)); }
//     tandem::Tensor forward(tandem::Tensor x) { return fc->forward(x); }
//     tandem::nn::Linear fc{nullptr};
//   };
//   TANDEM_MODULE(Net);
//   Net net;
//   for (auto& p : net->named_parameters()) std::cout << p.key();  // fc.weight
//   net->to(tandem::kFloat64);   // in place: optimizer handles stay valid
//   auto sd = net->state_dict();
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/core/device.h"
#include "tandem/core/dtype.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/ordered_dict.h"

namespace tandem::nn {

template <typename Derived>
class Cloneable;
class Module;

namespace detail {
/// Flags `module` (not its children) as a replica; replicate's business.
void mark_as_replica(Module& module);
/// The bytes of `module`'s own object (its members, not what they point
/// to), with its training flag left out: replicate's cache compares them to
/// see a change to a module's options or other non-tensor state. Empty for
/// a module that is not a Cloneable. See Note [Replica cache].
std::string object_state(const Module& module);
/// A number that changes whenever `module`'s own parameters, buffers or
/// submodules change: one registered, replaced or filled in, or the module
/// assigned to. A walk of a tree (its modules and tensors) is still the
/// tree's while every module in it has the number it had then; replicate
/// keeps its walk of a module by it. See Note [Replica cache].
uint64_t structure_version(const Module& module);

// The module type behind T: T itself, or the ContainedType of a holder.
template <typename T>
struct impl_of {
  using type = T;
};
template <module_holder T>
struct impl_of<T> {
  using type = typename T::ContainedType;
};
}  // namespace detail

class Module : public std::enable_shared_from_this<Module> {
 public:
  /// `name` overrides the name() derived from the class name.
  explicit Module(std::string name);
  Module();
  Module(const Module& other);
  Module& operator=(const Module& other);
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  virtual ~Module() = default;

  /// The class name ("Linear" for tandem's layers, the demangled class name
  /// for user modules) unless one was given to the constructor.
  std::string name() const;

  /// A deep copy sharing no storage with this module, optionally on
  /// `device`. Modules get it by deriving from Cloneable<Derived>.
  virtual std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const;

  // ---- the tree ----
  /// Parameters of this module and (if recurse) its descendants, with dotted
  /// names ("fc1.weight") in registration order.
  OrderedDict<std::string, Tensor> named_parameters(bool recurse = true) const;
  std::vector<Tensor> parameters(bool recurse = true) const;
  OrderedDict<std::string, Tensor> named_buffers(bool recurse = true) const;
  std::vector<Tensor> buffers(bool recurse = true) const;
  /// Direct submodules.
  OrderedDict<std::string, std::shared_ptr<Module>> named_children() const;
  std::vector<std::shared_ptr<Module>> children() const;
  /// This module (if include_self; it must then be owned by a shared_ptr)
  /// and all its descendants, depth first, named by dotted path.
  OrderedDict<std::string, std::shared_ptr<Module>> named_modules(
      const std::string& name_prefix = std::string(), bool include_self = true) const;
  std::vector<std::shared_ptr<Module>> modules(bool include_self = true) const;
  /// Calls fn on this module, then on every descendant.
  void apply(const std::function<void(Module&)>& fn);
  /// This module as a LinearImpl (given Linear or LinearImpl), or nullptr
  /// if it is another type: `if (auto* fc = m.as<nn::Linear>()) ...`.
  template <typename T>
  auto* as() noexcept {
    return dynamic_cast<typename detail::impl_of<T>::type*>(this);
  }
  template <typename T>
  const auto* as() const noexcept {
    return dynamic_cast<const typename detail::impl_of<T>::type*>(this);
  }

  // ---- mode, placement, gradients ----
  virtual void train(bool on = true);
  void eval() { train(false); }
  virtual bool is_training() const noexcept { return is_training_; }
  /// Move or convert every parameter, buffer and gradient in place
  /// (Tensor::set_data), so handles held elsewhere (optimizers) stay valid.
  /// A dtype applies to floating-point tensors only, as in PyTorch.
  virtual void to(Device device, ScalarType dtype, bool non_blocking = false);
  virtual void to(ScalarType dtype, bool non_blocking = false);
  virtual void to(Device device, bool non_blocking = false);
  /// Resets every parameter's .grad: to undefined, or to zeros. On a
  /// DataParallel replica it does nothing but warn: a replica's parameters
  /// are not leaves, their gradients flow to the original module's.
  virtual void zero_grad(bool set_to_none = true);
  /// Whether this module is a replica made by DataParallel / replicate.
  bool is_replica() const noexcept { return is_replica_; }

  // ---- state ----
  /// Parameters and buffers (detached, sharing storage) under dotted names.
  OrderedDict<std::string, Tensor> state_dict() const;
  /// Copies the values of `state_dict` into this module's parameters and
  /// buffers. Every problem (missing and unexpected keys when strict, shape
  /// mismatches always) is reported in one tandem::Error, in PyTorch's
  /// words, and then nothing has been changed.
  void load_state_dict(const OrderedDict<std::string, Tensor>& state_dict,
                       bool strict = true);

  // ---- printing ----
  /// Writes this module's own line: "Linear(in_features=5, ...)". Modules
  /// with children print as name() followed by the children.
  virtual void pretty_print(std::ostream& stream) const;

  // ---- registration ----
  /// Registers `tensor` (made requires_grad as asked) under `name`; an
  /// undefined tensor stands for an absent parameter (Linear without bias).
  Tensor register_parameter(std::string name, Tensor tensor, bool requires_grad = true);
  Tensor register_buffer(std::string name, Tensor tensor);
  /// Registers a submodule and returns what it was given.
  template <std::derived_from<Module> ModuleType>
  std::shared_ptr<ModuleType> register_module(std::string name,
                                              std::shared_ptr<ModuleType> module) {
    add_child(std::move(name), module);
    return module;
  }
  template <module_holder Holder>
  std::decay_t<Holder> register_module(std::string name, Holder&& holder) {
    add_child(std::move(name), holder.is_empty() ? nullptr : holder.ptr());
    return std::forward<Holder>(holder);
  }
  /// Puts `module` in place of the submodule registered as `name` (which
  /// must exist), keeping its position; returns what it was given.
  template <std::derived_from<Module> ModuleType>
  std::shared_ptr<ModuleType> replace_module(const std::string& name,
                                             std::shared_ptr<ModuleType> module) {
    replace_child(name, module);
    return module;
  }
  template <module_holder Holder>
  std::decay_t<Holder> replace_module(const std::string& name, Holder&& holder) {
    replace_child(name, holder.is_empty() ? nullptr : holder.ptr());
    return std::forward<Holder>(holder);
  }

 private:
  template <typename Derived>
  friend class Cloneable;
  friend void detail::mark_as_replica(Module& module);
  friend std::string detail::object_state(const Module& module);
  friend uint64_t detail::structure_version(const Module& module);

  // The whole object of the most derived module type (Cloneable's
  // override); empty here.
  virtual std::pair<const void*, size_t> object_bytes() const { return {nullptr, 0}; }
  // Cloneable's hook: replace this module's contents by a clone of `other`.
  virtual void clone_(Module& other, const std::optional<Device>& device);
  // Cloneable's second half: after reset() rebuilt the structure, take
  // copies of `original`'s values and clones of its children.
  void copy_state_from(const Module& original, const std::optional<Device>& device);
  void add_child(std::string name, std::shared_ptr<Module> module);
  void replace_child(const std::string& name, std::shared_ptr<Module> module);
  void check_new_name(const char* op, const std::string& name) const;
  void collect_named(const std::string& prefix,
                     bool parameters,
                     bool recurse,
                     OrderedDict<std::string, Tensor>& out) const;
  void collect_tensors(bool parameters, bool recurse, std::vector<Tensor>& out) const;
  void collect_modules(std::vector<std::shared_ptr<Module>>& out) const;
  void collect_state(const std::string& prefix,
                     OrderedDict<std::string, Tensor>& out) const;
  void collect_modules(const std::string& prefix,
                       OrderedDict<std::string, std::shared_ptr<Module>>& out) const;
  void convert(const std::optional<Device>& device,
               const std::optional<ScalarType>& dtype,
               bool non_blocking);
  void print_tree(std::ostream& stream, const std::string& indentation) const;
  friend std::ostream& operator<<(std::ostream& stream, const Module& module);

  std::optional<std::string> name_;
  OrderedDict<std::string, Tensor> parameters_{"Parameter"};
  OrderedDict<std::string, Tensor> buffers_{"Buffer"};
  OrderedDict<std::string, std::shared_ptr<Module>> children_{"Submodule"};
  bool is_training_ = true;
  bool is_replica_ = false;
  // See detail::structure_version; a fresh number at every change.
  uint64_t structure_version_;
};

/// Prints the module tree the way PyTorch does:
///   Sequential(
///     (0): Linear(in_features=5, out_features=2, bias=true)
///     (1): ReLU()
///   )
std::ostream& operator<<(std::ostream& stream, const Module& module);

}  // namespace tandem::nn
