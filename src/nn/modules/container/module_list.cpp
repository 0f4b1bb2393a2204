// ModuleList and ModuleDict: registering, indexing and cloning.
#include "tandem/nn/modules/container/module_list.h"

#include <string>

#include "tandem/core/error.h"
#include "tandem/nn/modules/container/module_dict.h"

namespace tandem::nn {

// ---- ModuleList ----

void ModuleListImpl::append_ptr(std::shared_ptr<Module> module) {
  TANDEM_CHECK(module != nullptr,
               "ModuleList::push_back: the module is empty (a null pointer or an "
               "empty module holder)");
  register_module(std::to_string(modules_.size()), module);
  modules_.push_back(std::move(module));
}

void ModuleListImpl::insert_ptr(size_t index, std::shared_ptr<Module> module) {
  TANDEM_CHECK_INDEX(index <= modules_.size(),
                     "ModuleList::insert: index ",
                     index,
                     " is out of range for a ModuleList of ",
                     modules_.size(),
                     " modules");
  TANDEM_CHECK(module != nullptr,
               "ModuleList::insert: the module is empty (a null pointer or an "
               "empty module holder)");
  modules_.insert(modules_.begin() + static_cast<std::ptrdiff_t>(index), module);
  // The names are the indices: from `index` on, each name now holds the
  // module after it; the last one is new.
  const size_t last = modules_.size() - 1;
  for (size_t i = index; i < last; ++i) replace_module(std::to_string(i), modules_[i]);
  register_module(std::to_string(last), modules_[last]);
}

std::shared_ptr<Module> ModuleListImpl::ptr(size_t index) const {
  TANDEM_CHECK_INDEX(index < modules_.size(),
                     "ModuleList: index ",
                     index,
                     " is out of range for a ModuleList of ",
                     modules_.size(),
                     " modules");
  return modules_[index];
}

// A copy keeps this list's own state (name, mode); its children are then
// swapped for clones.
std::shared_ptr<Module> ModuleListImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleListImpl>(*this);
  for (size_t i = 0; i < modules_.size(); ++i) {
    copy->modules_[i] = modules_[i]->clone(device);
    copy->replace_module(std::to_string(i), copy->modules_[i]);
  }
  return copy;
}

// ---- ModuleDict ----

ModuleDictImpl::ModuleDictImpl(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, module] : modules) insert_ptr(key, module);
}

ModuleDictImpl::ModuleDictImpl(const Dict& modules) { update(modules); }

std::shared_ptr<Module> ModuleDictImpl::insert_ptr(const std::string& key,
                                                   std::shared_ptr<Module> module) {
  TANDEM_CHECK(module != nullptr,
               "ModuleDict::insert: module '",
               key,
               "' is empty (a null pointer or an empty module holder)");
  if (std::shared_ptr<Module>* existing = modules_.find(key)) {
    *existing = module;
    replace_module(key, module);
  } else {
    register_module(key, module);
    modules_.insert(key, module);
  }
  return module;
}

void ModuleDictImpl::update(
    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& modules) {
  for (const auto& [key, module] : modules) insert_ptr(key, module);
}

void ModuleDictImpl::update(const Dict& modules) {
  for (const auto& item : modules) insert_ptr(item.key(), item.value());
}

std::shared_ptr<Module> ModuleDictImpl::operator[](const std::string& key) const {
  const std::shared_ptr<Module>* module = modules_.find(key);
  TANDEM_CHECK_INDEX(
      module != nullptr, "ModuleDict: no module under the key '", key, "'");
  return *module;
}

std::shared_ptr<Module> ModuleDictImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<ModuleDictImpl>(*this);
  for (auto& item : copy->modules_) {
    item.value() = item.value()->clone(device);
    copy->replace_module(item.key(), item.value());
  }
  return copy;
}

}  // namespace tandem::nn
