// Sequential: a chain of modules, each feeding the next, as LibTorch's
// torch::nn::Sequential. Children are named "0", "1", ... unless given names.
// It holds any module whose forward maps a Tensor to a Tensor (tandem's
// layers and user modules alike) through AnyModule.
//
//   tandem::nn::Sequential net(tandem::nn::Linear(5, 2), tandem::nn::ReLU());
//   net->push_back(tandem::nn::Linear(2, 1));
//   auto y = net->forward(x);
//   tandem::nn::Sequential named({{"fc", tandem::nn::Linear(5, 2)},
//                                 {"act", tandem::nn::Tanh()}});
//   auto fc = named->ptr<tandem::nn::LinearImpl>(0);
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/any_module.h"
#include "tandem/nn/ordered_dict.h"

namespace tandem::nn {

/// What Sequential can hold: anything an AnyModule is made from.
template <typename M>
concept sequential_element =
    std::is_same_v<std::decay_t<M>, AnyModule> || std::is_constructible_v<AnyModule, M>;

class SequentialImpl : public Cloneable<SequentialImpl> {
 public:
  using Iterator = std::vector<AnyModule>::const_iterator;

  SequentialImpl() = default;
  template <sequential_element... Modules>
  explicit SequentialImpl(Modules&&... modules) {
    (push_back(std::forward<Modules>(modules)), ...);
  }
  explicit SequentialImpl(std::initializer_list<NamedAnyModule> named_modules);
  explicit SequentialImpl(const OrderedDict<std::string, AnyModule>& named_modules);

  /// Nothing to create: the children are given at construction.
  void reset() override {}
  /// Clones every module, keeping names and order.
  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override;

  /// Appends a module (a holder, a shared_ptr, a module value or an
  /// AnyModule) named after its position, or under `name`.
  template <typename M>
  void push_back(M&& module) {
    push_back(std::to_string(modules_.size()), std::forward<M>(module));
  }
  template <typename M>
  void push_back(std::string name, M&& module) {
    if constexpr (std::is_same_v<std::decay_t<M>, AnyModule>) {
      append(std::move(name), std::forward<M>(module));
    } else {
      append(std::move(name), AnyModule(std::forward<M>(module)));
    }
  }

  /// Runs the modules in order; throws when the Sequential is empty.
  Tensor forward(const Tensor& input);

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.empty(); }
  Iterator begin() const { return modules_.begin(); }
  Iterator end() const { return modules_.end(); }
  std::shared_ptr<Module> operator[](size_t index) const { return ptr(index); }
  std::shared_ptr<Module> ptr(size_t index) const { return at_index(index).ptr(); }
  /// The module at `index` as its concrete type (throws if it is another).
  template <typename M>
  std::shared_ptr<M> ptr(size_t index) const {
    return at_index(index).get<M>();
  }
  template <typename M>
  M& at(size_t index) const {
    return *ptr<M>(index);
  }

 private:
  void append(std::string name, AnyModule module);
  const AnyModule& at_index(size_t index) const;

  std::vector<AnyModule> modules_;
};

class Sequential : public ModuleHolder<SequentialImpl> {
 public:
  using ModuleHolder<SequentialImpl>::ModuleHolder;
  Sequential() = default;
  /// Sequential({{"fc", Linear(5, 2)}, {"act", ReLU()}})
  Sequential(std::initializer_list<NamedAnyModule> named_modules)
      : ModuleHolder(std::make_shared<SequentialImpl>(named_modules)) {}
};

}  // namespace tandem::nn
