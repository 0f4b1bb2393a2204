// ModuleHolder<Impl>: the shared handle through which modules are used, as
// LibTorch's torch::nn::ModuleHolder. `Linear` holds a shared_ptr<LinearImpl>;
// copying a holder shares the module. A holder made from nullptr is empty
// (to be assigned later); using an empty one throws tandem::Error.
//
//   struct NetImpl : tandem::nn::Module { ... Tensor forward(Tensor x); };
//   TANDEM_MODULE(Net);            // class Net : ModuleHolder<NetImpl>
//   Net net;                       // default-constructs a NetImpl
//   tandem::nn::Linear fc{nullptr};
//   fc = tandem::nn::Linear(784, 64);
//   auto y = net->forward(x);      // or net(x)
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <ostream>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace tandem::nn {

namespace detail {
/// The readable form of a typeid name ("tandem::nn::LinearImpl").
std::string demangle(const char* mangled);
[[noreturn]] void throw_empty_holder(const std::string& impl_name);

// Whether (Head, Tail...) are arguments for Contained's constructor, rather
// than a holder, nullptr or shared_ptr, which the holder takes itself.
template <typename Holder, typename Contained, typename Head, typename... Tail>
concept constructor_arguments =
    sizeof...(Tail) > 0 || !(std::is_base_of_v<Holder, std::decay_t<Head>> ||
                             std::is_same_v<std::decay_t<Head>, std::nullptr_t> ||
                             std::is_convertible_v<Head, std::shared_ptr<Contained>>);

template <typename T, typename = void>
struct is_module_holder : std::false_type {};
}  // namespace detail

template <typename Contained>
class ModuleHolder {
 public:
  using ContainedType = Contained;

  /// Default-constructs the module; modules without a default constructor
  /// must be given arguments, or nullptr for an empty holder.
  ModuleHolder() requires std::is_default_constructible_v<Contained>
      : impl_(std::make_shared<Contained>()) {}
  ModuleHolder(std::nullptr_t) {}                  // implicit
  ModuleHolder(std::shared_ptr<Contained> module)  // implicit
      : impl_(std::move(module)) {}

  /// Forwards the arguments to Contained's constructor: Linear(784, 64).
  template <typename Head, typename... Tail>
  requires detail::constructor_arguments<ModuleHolder, Contained, Head, Tail...>
  explicit ModuleHolder(Head&& head, Tail&&... tail)
      : impl_(std::make_shared<Contained>(std::forward<Head>(head),
                                          std::forward<Tail>(tail)...)) {}

  explicit operator bool() const noexcept { return !is_empty(); }
  bool is_empty() const noexcept { return impl_ == nullptr; }

  Contained* operator->() { return get(); }
  const Contained* operator->() const { return get(); }
  Contained& operator*() { return *get(); }
  const Contained& operator*() const { return *get(); }
  Contained* get() { return checked().get(); }
  const Contained* get() const { return checked().get(); }
  const std::shared_ptr<Contained>& ptr() const { return checked(); }

  /// Calls the module's forward: `net(x)` is `net->forward(x)`.
  template <typename... Args>
  decltype(auto) operator()(Args&&... args) {
    return get()->forward(std::forward<Args>(args)...);
  }
  /// Forwards indexing to the module (Sequential's seq[0]).
  template <typename Arg>
  decltype(auto) operator[](Arg&& arg) {
    return (*get())[std::forward<Arg>(arg)];
  }

 private:
  const std::shared_ptr<Contained>& checked() const {
    if (impl_ == nullptr) {
      detail::throw_empty_holder(detail::demangle(typeid(Contained).name()));
    }
    return impl_;
  }

  std::shared_ptr<Contained> impl_;
};

namespace detail {
template <typename T>
struct is_module_holder<T, std::void_t<typename T::ContainedType>>
    : std::is_base_of<ModuleHolder<typename T::ContainedType>, T> {};
}  // namespace detail

/// True for ModuleHolder<T> and classes derived from one (Linear, user holders).
template <typename T>
concept module_holder = detail::is_module_holder<std::decay_t<T>>::value;

template <typename Contained>
std::ostream& operator<<(std::ostream& out, const ModuleHolder<Contained>& holder) {
  return out << *holder;
}

}  // namespace tandem::nn

/// Defines `Name` as a holder of `ImplType` (LibTorch's TORCH_MODULE_IMPL).
#define TANDEM_MODULE_IMPL(Name, ImplType)                    \
  class Name : public ::tandem::nn::ModuleHolder<ImplType> {  \
   public:                                                    \
    using ::tandem::nn::ModuleHolder<ImplType>::ModuleHolder; \
    using Impl = ImplType;                                    \
  }

/// Defines `Name` as a holder of `Name##Impl` (LibTorch's TORCH_MODULE).
#define TANDEM_MODULE(Name) TANDEM_MODULE_IMPL(Name, Name##Impl)
