// ModuleList: modules held in a list and registered as submodules "0",
// "1", ..., as LibTorch's torch::nn::ModuleList. It has no forward: the
// owner decides how its modules run. Its modules' parameters appear in the
// owner's parameters() and state_dict() ("layers.0.weight"), are moved by
// to(), cloned by clone() and replicated by DataParallel.
//
//   tandem::nn::ModuleList layers(tandem::nn::Linear(4, 8), tandem::nn::ReLU());
//   layers->push_back(tandem::nn::Linear(8, 2));
//   for (const auto& m : *layers) std::cout << *m << "\n";
//   auto fc = layers->ptr<tandem::nn::LinearImpl>(2);
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"

namespace tandem::nn {

/// What a ModuleList or ModuleDict takes: a holder (Linear), a shared_ptr
/// to a module, or a module value (LinearImpl), which is moved into a
/// shared_ptr.
template <typename M>
concept module_like =
    module_holder<M> || std::is_convertible_v<std::decay_t<M>, std::shared_ptr<Module>> ||
    std::derived_from<std::decay_t<M>, Module>;

namespace detail {
template <module_like M>
std::shared_ptr<Module> as_module_ptr(M&& module) {
  if constexpr (module_holder<M>) {
    return module.is_empty() ? nullptr : module.ptr();
  } else if constexpr (std::derived_from<std::decay_t<M>, Module>) {
    return std::make_shared<std::decay_t<M>>(std::forward<M>(module));
  } else {
    return std::shared_ptr<Module>(std::forward<M>(module));
  }
}
}  // namespace detail

class ModuleListImpl : public Cloneable<ModuleListImpl> {
 public:
  using Iterator = std::vector<std::shared_ptr<Module>>::const_iterator;

  ModuleListImpl() = default;
  template <module_like... Modules>
  requires(sizeof...(Modules) > 0 &&
           (!std::is_same_v<std::decay_t<Modules>, ModuleListImpl> &&
            ...)) explicit ModuleListImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }

  /// Nothing to create: the modules are given.
  void reset() override {}
  /// Clones every module, keeping the order.
  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override;

  /// Appends a module, registered under its index.
  template <module_like M>
  void push_back(M&& module) {
    append_ptr(detail::as_module_ptr(std::forward<M>(module)));
  }
  /// Python's name for push_back.
  template <module_like M>
  void append(M&& module) {
    push_back(std::forward<M>(module));
  }
  /// Appends every module of `container` (a ModuleList, a vector of
  /// holders or pointers, ...).
  template <typename Container>
  void extend(const Container& container) {
    for (const auto& module : container) push_back(module);
  }
  /// Inserts a module before position `index` (at most size()); the
  /// modules after it move up one index, and their names with them.
  template <module_like M>
  void insert(size_t index, M&& module) {
    insert_ptr(index, detail::as_module_ptr(std::forward<M>(module)));
  }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  Iterator begin() const { return modules_.begin(); }
  Iterator end() const { return modules_.end(); }

  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(size_t index) const;
  /// The module at `index` as its concrete type (given the Impl or the
  /// holder type); throws if it is another.
  template <typename T>
  auto ptr(size_t index) const {
    using Impl = typename detail::impl_of<T>::type;
    auto typed = std::dynamic_pointer_cast<Impl>(ptr(index));
    TANDEM_CHECK(typed != nullptr,
                 "ModuleList: the module at index ",
                 index,
                 " is a ",
                 ptr(index)->name(),
                 ", not the type asked for");
    return typed;
  }
  template <typename T>
  auto& at(size_t index) const {
    return *ptr<T>(index);
  }

 private:
  void append_ptr(std::shared_ptr<Module> module);
  void insert_ptr(size_t index, std::shared_ptr<Module> module);

  std::vector<std::shared_ptr<Module>> modules_;
};

TANDEM_MODULE(ModuleList);

}  // namespace tandem::nn
