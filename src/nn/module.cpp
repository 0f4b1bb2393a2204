// Module: registration, tree walks, mode and placement, state dicts,
// cloning support and printing.
#include "tandem/nn/module.h"

#include <atomic>
#include <sstream>
#include <utility>

#include "tandem/core/error.h"
#include "tandem/core/warning.h"
#include "tandem/graph/grad_mode.h"

namespace tandem::nn {
namespace {

std::string join(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

// "tandem::nn::LinearImpl" -> "Linear"; other names stay as they are, as in
// LibTorch.
std::string builtin_name(std::string name) {
  const std::string ns = "tandem::nn::";
  const std::string impl = "Impl";
  const bool builtin = name.rfind(ns, 0) == 0 && name.size() > ns.size() + impl.size() &&
                       name.compare(name.size() - impl.size(), impl.size(), impl) == 0;
  if (!builtin) return name;
  return name.substr(ns.size(), name.size() - ns.size() - impl.size());
}

// The shared_ptr that owns `module`, for a walk that returns it too.
std::shared_ptr<Module> shared_self(const Module& module, const char* op) {
  std::shared_ptr<const Module> self = module.weak_from_this().lock();
  TANDEM_CHECK(self != nullptr,
               op,
               ": ",
               module.name(),
               " is not owned by a std::shared_ptr, so it cannot return itself; "
               "create it with std::make_shared (or a module holder), or pass "
               "include_self=false");
  return std::const_pointer_cast<Module>(self);
}

uint64_t new_structure_version() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace

Module::Module(std::string name)
    : name_(std::move(name)), structure_version_(new_structure_version()) {}
Module::Module() : structure_version_(new_structure_version()) {}

// Copies and moves give the tree a new number: an assignment replaces this
// module's tensors and submodules, and a move empties the source's.
Module::Module(const Module& other)
    : std::enable_shared_from_this<Module>(),
      name_(other.name_),
      parameters_(other.parameters_),
      buffers_(other.buffers_),
      children_(other.children_),
      is_training_(other.is_training_),
      is_replica_(other.is_replica_),
      structure_version_(new_structure_version()) {}

Module& Module::operator=(const Module& other) {
  if (this == &other) return *this;
  name_ = other.name_;
  parameters_ = other.parameters_;
  buffers_ = other.buffers_;
  children_ = other.children_;
  is_training_ = other.is_training_;
  is_replica_ = other.is_replica_;
  structure_version_ = new_structure_version();
  return *this;
}

Module::Module(Module&& other) noexcept
    : std::enable_shared_from_this<Module>(),
      name_(std::move(other.name_)),
      parameters_(std::move(other.parameters_)),
      buffers_(std::move(other.buffers_)),
      children_(std::move(other.children_)),
      is_training_(other.is_training_),
      is_replica_(other.is_replica_),
      structure_version_(new_structure_version()) {
  other.structure_version_ = new_structure_version();
}

Module& Module::operator=(Module&& other) noexcept {
  if (this == &other) return *this;
  name_ = std::move(other.name_);
  parameters_ = std::move(other.parameters_);
  buffers_ = std::move(other.buffers_);
  children_ = std::move(other.children_);
  is_training_ = other.is_training_;
  is_replica_ = other.is_replica_;
  structure_version_ = new_structure_version();
  other.structure_version_ = new_structure_version();
  return *this;
}

std::string Module::name() const {
  if (name_) return *name_;
  return builtin_name(detail::demangle(typeid(*this).name()));
}

std::shared_ptr<Module> Module::clone(const std::optional<Device>& /*device*/) const {
  throw Error(
      tandem::detail::str("clone: clone() is not implemented for ",
                          name(),
                          "; derive it from tandem::nn::Cloneable<",
                          name(),
                          "> instead of tandem::nn::Module and implement reset()"));
}

void Module::clone_(Module& /*other*/, const std::optional<Device>& /*device*/) {
  throw Error(tandem::detail::str(
      "clone: cannot clone into ", name(), ", which is not a tandem::nn::Cloneable"));
}

// ---- registration ----

void Module::check_new_name(const char* op, const std::string& name) const {
  TANDEM_CHECK(!name.empty(), op, ": name must not be empty");
  TANDEM_CHECK(name.find('.') == std::string::npos,
               op,
               ": name must not contain a dot (got '",
               name,
               "')");
  const char* taken = parameters_.contains(name) ? "a parameter"
                      : buffers_.contains(name)  ? "a buffer"
                      : children_.contains(name) ? "a submodule"
                                                 : nullptr;
  TANDEM_CHECK(taken == nullptr,
               op,
               ": '",
               name,
               "' is already registered as ",
               taken,
               " of ",
               this->name());
}

Tensor Module::register_parameter(std::string name, Tensor tensor, bool requires_grad) {
  check_new_name("register_parameter", name);
  if (tensor.defined()) {
    TANDEM_CHECK(tensor.is_leaf(),
                 "register_parameter: '",
                 name,
                 "' is the result of an op (it has a grad_fn); register a leaf "
                 "tensor such as t.detach()");
    tensor.set_requires_grad(requires_grad);
  }
  structure_version_ = new_structure_version();
  return parameters_.insert(std::move(name), std::move(tensor));
}

Tensor Module::register_buffer(std::string name, Tensor tensor) {
  check_new_name("register_buffer", name);
  structure_version_ = new_structure_version();
  return buffers_.insert(std::move(name), std::move(tensor));
}

void Module::add_child(std::string name, std::shared_ptr<Module> module) {
  check_new_name("register_module", name);
  TANDEM_CHECK(module != nullptr,
               "register_module: submodule '",
               name,
               "' is empty (a null pointer or an empty module holder)");
  TANDEM_CHECK(module.get() != this,
               "register_module: ",
               this->name(),
               " cannot be its own submodule '",
               name,
               "'");
  structure_version_ = new_structure_version();
  children_.insert(std::move(name), std::move(module));
}

void Module::replace_child(const std::string& name, std::shared_ptr<Module> module) {
  TANDEM_CHECK(children_.contains(name),
               "replace_module: ",
               this->name(),
               " has no submodule named '",
               name,
               "'");
  TANDEM_CHECK(module != nullptr,
               "replace_module: the new submodule '",
               name,
               "' is empty (a null pointer or an empty module holder)");
  structure_version_ = new_structure_version();
  children_[name] = std::move(module);
}

// ---- the tree ----

void Module::collect_named(const std::string& prefix,
                           bool parameters,
                           bool recurse,
                           OrderedDict<std::string, Tensor>& out) const {
  for (const auto& item : parameters ? parameters_ : buffers_) {
    if (item->defined()) out.insert(join(prefix, item.key()), item.value());
  }
  if (!recurse) return;
  for (const auto& child : children_) {
    child.value()->collect_named(join(prefix, child.key()), parameters, recurse, out);
  }
}

void Module::collect_tensors(bool parameters,
                             bool recurse,
                             std::vector<Tensor>& out) const {
  for (const auto& item : parameters ? parameters_ : buffers_) {
    if (item->defined()) out.push_back(item.value());
  }
  if (!recurse) return;
  for (const auto& child : children_)
    child.value()->collect_tensors(parameters, recurse, out);
}

OrderedDict<std::string, Tensor> Module::named_parameters(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect_named("", /*parameters=*/true, recurse, out);
  return out;
}

// Without the names: a walk that builds no strings and looks nothing up.
std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  collect_tensors(/*parameters=*/true, recurse, out);
  return out;
}

OrderedDict<std::string, Tensor> Module::named_buffers(bool recurse) const {
  OrderedDict<std::string, Tensor> out;
  collect_named("", /*parameters=*/false, recurse, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  collect_tensors(/*parameters=*/false, recurse, out);
  return out;
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_children() const {
  return children_;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  return children_.values();
}

void Module::collect_modules(
    const std::string& prefix,
    OrderedDict<std::string, std::shared_ptr<Module>>& out) const {
  for (const auto& child : children_) {
    const std::string name = join(prefix, child.key());
    out.insert(name, child.value());
    child.value()->collect_modules(name, out);
  }
}

OrderedDict<std::string, std::shared_ptr<Module>> Module::named_modules(
    const std::string& name_prefix, bool include_self) const {
  OrderedDict<std::string, std::shared_ptr<Module>> out;
  if (include_self) out.insert(name_prefix, shared_self(*this, "named_modules"));
  collect_modules(name_prefix, out);
  return out;
}

void Module::collect_modules(std::vector<std::shared_ptr<Module>>& out) const {
  for (const auto& child : children_) {
    out.push_back(child.value());
    child.value()->collect_modules(out);
  }
}

std::vector<std::shared_ptr<Module>> Module::modules(bool include_self) const {
  std::vector<std::shared_ptr<Module>> out;
  if (include_self) out.push_back(shared_self(*this, "modules"));
  collect_modules(out);
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  fn(*this);
  for (auto& child : children_) child.value()->apply(fn);
}

// ---- mode, placement, gradients ----

void Module::train(bool on) {
  is_training_ = on;
  for (auto& child : children_) child.value()->train(on);
}

void Module::convert(const std::optional<Device>& device,
                     const std::optional<ScalarType>& dtype,
                     bool non_blocking) {
  NoGradGuard no_grad;
  auto convert_one = [&](const Tensor& t) {
    const Device to_device = device.value_or(t.device());
    const ScalarType to_dtype = dtype && t.is_floating_point() ? *dtype : t.dtype();
    if (to_device == t.device() && to_dtype == t.dtype()) return;
    t.set_data(t.detach().to(to_device, to_dtype, non_blocking));
  };
  for (auto& item : parameters_) {
    if (!item->defined()) continue;
    convert_one(item.value());
    if (item->grad().defined()) convert_one(item->grad());
  }
  for (auto& item : buffers_) {
    if (item->defined()) convert_one(item.value());
  }
}

void Module::to(Device device, ScalarType dtype, bool non_blocking) {
  TANDEM_CHECK(is_floating_point(dtype),
               "Module::to: only floating-point dtypes are "
               "accepted, got ",
               dtype);
  for (auto& child : children_) child.value()->to(device, dtype, non_blocking);
  convert(device, dtype, non_blocking);
}

void Module::to(ScalarType dtype, bool non_blocking) {
  TANDEM_CHECK(is_floating_point(dtype),
               "Module::to: only floating-point dtypes are "
               "accepted, got ",
               dtype);
  for (auto& child : children_) child.value()->to(dtype, non_blocking);
  convert(std::nullopt, dtype, non_blocking);
}

void Module::to(Device device, bool non_blocking) {
  for (auto& child : children_) child.value()->to(device, non_blocking);
  convert(device, std::nullopt, non_blocking);
}

void Module::zero_grad(bool set_to_none) {
  if (is_replica_) {
    // PyTorch's words (torch/nn/modules/module.py).
    warn(
        "Calling .zero_grad() from a module created with nn.DataParallel() has no "
        "effect. The parameters are copied (in a differentiable manner) from the "
        "original module. This means they are not leaf nodes in autograd and so don't "
        "accumulate gradients. If you need gradients in your forward method, consider "
        "using autograd.grad instead.");
  }
  for (Tensor& p : parameters()) {
    if (!p.grad().defined()) continue;
    if (set_to_none) {
      p.mutable_grad() = Tensor();
    } else {
      p.mutable_grad().detach_();
      p.mutable_grad().zero_();
    }
  }
}

namespace detail {
void mark_as_replica(Module& module) { module.is_replica_ = true; }

uint64_t structure_version(const Module& module) { return module.structure_version_; }

std::string object_state(const Module& module) {
  const auto [object, size] = module.object_bytes();
  if (object == nullptr) return {};
  std::string bytes(static_cast<const char*>(object), size);
  // train() and eval() flip this flag, and replicate copies it itself.
  const auto flag = reinterpret_cast<const char*>(&module.is_training_) -
                    static_cast<const char*>(object);
  if (flag >= 0 && static_cast<size_t>(flag) < size) bytes[static_cast<size_t>(flag)] = 0;
  return bytes;
}
}  // namespace detail

// ---- state ----

// PyTorch's order: each module's parameters, then its buffers, then its
// children's entries.
void Module::collect_state(const std::string& prefix,
                           OrderedDict<std::string, Tensor>& out) const {
  for (const auto* dict : {&parameters_, &buffers_}) {
    for (const auto& item : *dict) {
      if (item->defined()) out.insert(join(prefix, item.key()), item->detach());
    }
  }
  for (const auto& child : children_) {
    child.value()->collect_state(join(prefix, child.key()), out);
  }
}

OrderedDict<std::string, Tensor> Module::state_dict() const {
  OrderedDict<std::string, Tensor> out;
  collect_state("", out);
  return out;
}

namespace {

std::string quoted_list(const std::vector<std::string>& keys) {
  std::ostringstream out;
  for (size_t i = 0; i < keys.size(); ++i) out << (i ? ", \"" : "\"") << keys[i] << '"';
  return out.str();
}

}  // namespace

void Module::load_state_dict(const OrderedDict<std::string, Tensor>& state_dict,
                             bool strict) {
  // The targets share storage with this module's tensors (state_dict()
  // detaches without copying), so copying into them updates the module.
  const OrderedDict<std::string, Tensor> own = this->state_dict();
  std::vector<std::string> missing;
  std::vector<std::string> unexpected;
  std::vector<std::string> mismatched;
  for (const auto& item : own) {
    const Tensor* given = state_dict.find(item.key());
    if (given == nullptr) {
      missing.push_back(item.key());
    } else if (!given->defined()) {
      mismatched.push_back(
          tandem::detail::str("undefined tensor for ",
                              item.key(),
                              ": a state_dict entry must hold a value."));
    } else if (given->sizes() != item->sizes()) {
      mismatched.push_back(
          tandem::detail::str("size mismatch for ",
                              item.key(),
                              ": copying a param with shape ",
                              given->sizes(),
                              " from checkpoint, the shape in current model is ",
                              item->sizes(),
                              "."));
    }
  }
  for (const auto& item : state_dict) {
    if (!own.contains(item.key())) unexpected.push_back(item.key());
  }

  std::string errors;
  if (strict && !missing.empty()) {
    errors += "\n\tMissing key(s) in state_dict: " + quoted_list(missing) + ".";
  }
  if (strict && !unexpected.empty()) {
    errors += "\n\tUnexpected key(s) in state_dict: " + quoted_list(unexpected) + ".";
  }
  for (const std::string& line : mismatched) errors += "\n\t" + line;
  TANDEM_CHECK(
      errors.empty(), "Error(s) in loading state_dict for ", name(), ":", errors);

  NoGradGuard no_grad;
  for (const auto& item : own) {
    if (const Tensor* given = state_dict.find(item.key())) {
      Tensor target = item.value();
      target.copy_(given->to(target.device(), target.dtype()));
    }
  }
}

// ---- cloning ----

void Module::copy_state_from(const Module& original,
                             const std::optional<Device>& device) {
  TANDEM_CHECK(parameters_.size() == original.parameters_.size() &&
                   buffers_.size() == original.buffers_.size() &&
                   children_.size() == original.children_.size(),
               "clone: after reset(), the clone of ",
               name(),
               " has ",
               parameters_.size(),
               " parameters, ",
               buffers_.size(),
               " buffers and ",
               children_.size(),
               " submodules but the original has ",
               original.parameters_.size(),
               ", ",
               original.buffers_.size(),
               " and ",
               original.children_.size(),
               "; register all of them in reset(), not in the constructor");
  auto copy_of = [&](const Tensor& t) {
    if (!t.defined()) return Tensor();
    if (device && *device != t.device()) return t.detach().to(*device);
    return t.detach().clone();
  };
  // Fresh tensors keep their identity (the clone's members point at them)
  // and take the original's values, dtype and requires_grad.
  auto take = [&](OrderedDict<std::string, Tensor>& mine,
                  const OrderedDict<std::string, Tensor>& theirs) {
    for (const auto& item : theirs) {
      Tensor& target = mine[item.key()];
      Tensor data = copy_of(item.value());
      if (target.defined() && data.defined()) {
        target.set_data(data);
      } else {
        target = data;
        structure_version_ = new_structure_version();
      }
      if (target.defined()) target.set_requires_grad(item->requires_grad());
    }
  };
  take(parameters_, original.parameters_);
  take(buffers_, original.buffers_);
  for (const auto& child : original.children_) {
    children_[child.key()]->clone_(*child.value(), device);
  }
}

// ---- printing ----

void Module::pretty_print(std::ostream& stream) const {
  stream << name();
  if (children_.is_empty()) stream << "()";
}

void Module::print_tree(std::ostream& stream, const std::string& indentation) const {
  pretty_print(stream);
  if (children_.is_empty()) return;
  stream << "(\n";
  const std::string inner = indentation + "  ";
  for (const auto& child : children_) {
    stream << inner << "(" << child.key() << "): ";
    child.value()->print_tree(stream, inner);
    stream << "\n";
  }
  stream << indentation << ")";
}

std::ostream& operator<<(std::ostream& stream, const Module& module) {
  module.print_tree(stream, "");
  return stream;
}

}  // namespace tandem::nn
