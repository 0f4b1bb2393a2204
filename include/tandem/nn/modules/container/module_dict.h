// ModuleDict: modules under string keys, in insertion order, registered as
// submodules under those keys, as LibTorch's torch::nn::ModuleDict. Like
// ModuleList it has no forward; its modules' parameters are the owner's
// ("blocks.encoder.weight").
//
//   tandem::nn::ModuleDict heads({{"cls", tandem::nn::Linear(8, 10).ptr()},
//                                 {"box", tandem::nn::Linear(8, 4).ptr()}});
//   auto y = heads->at<tandem::nn::LinearImpl>("cls").forward(x);
//   for (const auto& item : *heads) std::cout << item.key() << "\n";
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/modules/container/module_list.h"
#include "tandem/nn/ordered_dict.h"

namespace tandem::nn {

class ModuleDictImpl : public Cloneable<ModuleDictImpl> {
 public:
  using Dict = OrderedDict<std::string, std::shared_ptr<Module>>;
  using Iterator = Dict::ConstIterator;

  ModuleDictImpl() = default;
  explicit ModuleDictImpl(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  explicit ModuleDictImpl(const Dict& modules);

  void reset() override {}
  /// Clones every module, keeping keys and order.
  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override;

  /// Adds `module` under `key`, or replaces the module already there (in
  /// its place). Returns the module.
  template <module_like M>
  std::shared_ptr<Module> insert(const std::string& key, M&& module) {
    return insert_ptr(key, detail::as_module_ptr(std::forward<M>(module)));
  }
  /// insert() for every entry, in order.
  void update(
      const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules);
  void update(const Dict& modules);
  void update(const ModuleDictImpl& other) { update(other.modules_); }

  size_t size() const noexcept { return modules_.size(); }
  bool is_empty() const noexcept { return modules_.is_empty(); }
  bool contains(const std::string& key) const { return modules_.contains(key); }
  std::vector<std::string> keys() const { return modules_.keys(); }
  std::vector<std::shared_ptr<Module>> values() const { return modules_.values(); }
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> items() const {
    return modules_.pairs();
  }
  Iterator begin() const { return modules_.begin(); }
  Iterator end() const { return modules_.end(); }

  std::shared_ptr<Module> operator[](const std::string& key) const;
  /// The module under `key` as its concrete type (Impl or holder type).
  template <typename T>
  auto ptr(const std::string& key) const {
    using Impl = typename detail::impl_of<T>::type;
    auto typed = std::dynamic_pointer_cast<Impl>((*this)[key]);
    TANDEM_CHECK(typed != nullptr,
                 "ModuleDict: the module under '",
                 key,
                 "' is a ",
                 (*this)[key]->name(),
                 ", not the type asked for");
    return typed;
  }
  template <typename T>
  auto& at(const std::string& key) const {
    return *ptr<T>(key);
  }

 private:
  std::shared_ptr<Module> insert_ptr(const std::string& key,
                                     std::shared_ptr<Module> module);

  Dict modules_{"Module"};
};

TANDEM_MODULE(ModuleDict);

}  // namespace tandem::nn
