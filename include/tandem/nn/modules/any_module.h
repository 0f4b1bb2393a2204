// AnyModule: a type-erased module whose forward maps one Tensor to one
// Tensor, as LibTorch's torch::nn::AnyModule (restricted to that signature,
// which is all Sequential needs). It keeps the concrete type, so forward
// calls the module's own (non-virtual) forward and clone() clones it deeply.
//
//   tandem::nn::AnyModule any(tandem::nn::Linear(3, 4));
//   auto y = any.forward(x);
//   std::shared_ptr<tandem::nn::LinearImpl> fc = any.get<tandem::nn::LinearImpl>();
#pragma once

#include <concepts>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "tandem/core/device.h"
#include "tandem/core/tensor.h"
#include "tandem/nn/module.h"
#include "tandem/nn/module_holder.h"

namespace tandem::nn {

template <typename M>
concept has_unary_tensor_forward = requires(M& module, const Tensor& x) {
  { module.forward(x) } -> std::convertible_to<Tensor>;
};

/// A module with `Tensor forward(const Tensor&)` (or a compatible one).
template <typename M>
concept unary_tensor_module = std::derived_from<M, Module> && has_unary_tensor_forward<M>;

/// A holder of such a module (Linear, user holders).
template <typename H>
concept unary_tensor_holder =
    module_holder<H> && unary_tensor_module<typename std::decay_t<H>::ContainedType>;

class AnyModule {
 public:
  AnyModule() = default;
  template <unary_tensor_module M>
  explicit AnyModule(std::shared_ptr<M> module)
      : content_(module == nullptr ? nullptr
                                   : std::make_shared<Typed<M>>(std::move(module))) {}
  template <unary_tensor_holder Holder>
  explicit AnyModule(const Holder& holder)
      : AnyModule(holder.is_empty() ? nullptr : holder.ptr()) {}
  /// Takes a module by value: AnyModule(LinearImpl(3, 4)).
  template <unary_tensor_module M>
  explicit AnyModule(M&& module)
      : AnyModule(std::make_shared<std::decay_t<M>>(std::forward<M>(module))) {}

  bool is_empty() const noexcept { return content_ == nullptr; }
  Tensor forward(const Tensor& input) const { return checked().forward(input); }
  const std::shared_ptr<Module>& ptr() const { return checked().module; }
  /// The module as its concrete type; throws if it is another type.
  template <typename M>
  std::shared_ptr<M> get() const {
    auto typed = std::dynamic_pointer_cast<M>(ptr());
    TANDEM_CHECK(typed != nullptr,
                 "AnyModule::get: the module is a ",
                 ptr()->name(),
                 ", not a ",
                 detail::demangle(typeid(M).name()));
    return typed;
  }
  /// A deep copy (Module::clone of the concrete type).
  AnyModule clone(const std::optional<Device>& device = std::nullopt) const {
    AnyModule copy;
    copy.content_ = checked().clone(device);
    return copy;
  }

 private:
  struct Content {
    explicit Content(std::shared_ptr<Module> m) : module(std::move(m)) {}
    virtual ~Content() = default;
    virtual Tensor forward(const Tensor& input) const = 0;
    virtual std::shared_ptr<Content> clone(const std::optional<Device>& device) const = 0;
    std::shared_ptr<Module> module;
  };

  template <typename M>
  struct Typed final : Content {
    explicit Typed(std::shared_ptr<M> m) : Content(m), typed(std::move(m)) {
      TANDEM_INTERNAL_ASSERT(typed != nullptr, "AnyModule of a null module");
    }
    Tensor forward(const Tensor& input) const override { return typed->forward(input); }
    std::shared_ptr<Content> clone(const std::optional<Device>& device) const override {
      return std::make_shared<Typed>(std::dynamic_pointer_cast<M>(typed->clone(device)));
    }
    std::shared_ptr<M> typed;
  };

  const Content& checked() const {
    TANDEM_CHECK(content_ != nullptr, "AnyModule: the AnyModule is empty");
    return *content_;
  }

  std::shared_ptr<Content> content_;
};

/// A name and a module, for building a Sequential with named children.
class NamedAnyModule {
 public:
  template <typename M>
  NamedAnyModule(std::string name, M&& module)  // implicit
      : name_(std::move(name)), module_(std::forward<M>(module)) {}

  const std::string& name() const noexcept { return name_; }
  const AnyModule& module() const noexcept { return module_; }

 private:
  std::string name_;
  AnyModule module_;
};

}  // namespace tandem::nn
