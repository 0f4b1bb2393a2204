// Sequential: building the chain, running it, and cloning it.
#include "tandem/nn/modules/sequential.h"

#include "tandem/core/error.h"

namespace tandem::nn {

SequentialImpl::SequentialImpl(std::initializer_list<NamedAnyModule> named_modules) {
  for (const NamedAnyModule& named : named_modules)
    push_back(named.name(), named.module());
}

SequentialImpl::SequentialImpl(const OrderedDict<std::string, AnyModule>& named_modules) {
  for (const auto& item : named_modules) push_back(item.key(), item.value());
}

void SequentialImpl::append(std::string name, AnyModule module) {
  TANDEM_CHECK(!module.is_empty(),
               "Sequential::push_back: module '",
               name,
               "' is empty (a null pointer or an empty module holder)");
  register_module(std::move(name), module.ptr());
  modules_.push_back(std::move(module));
}

const AnyModule& SequentialImpl::at_index(size_t index) const {
  TANDEM_CHECK_INDEX(index < modules_.size(),
                     "Sequential: index ",
                     index,
                     " is out of range for a Sequential of ",
                     modules_.size(),
                     " modules");
  return modules_[index];
}

Tensor SequentialImpl::forward(const Tensor& input) {
  TANDEM_CHECK(!modules_.empty(),
               "Sequential: cannot call forward() on an empty Sequential");
  Tensor x = input;
  for (const AnyModule& module : modules_) x = module.forward(x);
  return x;
}

// A copy keeps this Sequential's own state (name, mode); its children are
// then swapped for clones. The children's names come from named_children(),
// which lists them in the order of modules_.
std::shared_ptr<Module> SequentialImpl::clone(const std::optional<Device>& device) const {
  auto copy = std::make_shared<SequentialImpl>(*this);
  const std::vector<std::string> names = named_children().keys();
  for (size_t i = 0; i < modules_.size(); ++i) {
    copy->modules_[i] = modules_[i].clone(device);
    copy->replace_module(names[i], copy->modules_[i].ptr());
  }
  return copy;
}

}  // namespace tandem::nn
