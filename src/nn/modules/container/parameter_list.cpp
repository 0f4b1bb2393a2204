// ParameterList and ParameterDict: registering, indexing, cloning and
// printing.
#include "tandem/nn/modules/container/parameter_list.h"

#include <string>

#include "tandem/core/error.h"
#include "tandem/graph/grad_mode.h"
#include "tandem/nn/modules/container/parameter_dict.h"

namespace tandem::nn {
namespace {

// A copy of a parameter sharing no storage with it, as Cloneable's clones.
Tensor copy_of(const Tensor& t, const std::optional<Device>& device) {
  NoGradGuard no_grad;
  Tensor copy =
      (device && *device != t.device()) ? t.detach().to(*device) : t.detach().clone();
  copy.set_requires_grad(t.requires_grad());
  return copy;
}

void print_parameters(std::ostream& stream,
                      const std::string& name,
                      const OrderedDict<std::string, Tensor>& params) {
  stream << name << "(";
  if (params.is_empty()) {
    stream << ")";
    return;
  }
  stream << "\n";
  for (const auto& item : params) {
    stream << "  (" << item.key() << "): Parameter containing: [" << item->dtype()
           << " of size " << item->sizes() << "]\n";
  }
  stream << ")";
}

}  // namespace

// ---- ParameterList ----

Tensor ParameterListImpl::append(Tensor param) {
  TANDEM_CHECK(param.defined(), "ParameterList::append: the tensor is undefined");
  const bool requires_grad = param.requires_grad();
  std::string key = std::to_string(items_.size());
  Tensor registered = register_parameter(key, std::move(param), requires_grad);
  items_.emplace_back(std::move(key), registered);
  return registered;
}

Tensor ParameterListImpl::at(size_t index) const {
  TANDEM_CHECK_INDEX(index < items_.size(),
                     "ParameterList: index ",
                     index,
                     " is out of range for a ParameterList of ",
                     items_.size(),
                     " parameters");
  return items_[index].value();
}

// Built afresh (the copy constructor would share the Module's parameters
// with the original), then given this list's mode.
std::shared_ptr<Module> ParameterListImpl::clone(
    const std::optional<Device>& device) const {
  auto copy = std::make_shared<ParameterListImpl>();
  for (const auto& item : items_) copy->append(copy_of(item.value(), device));
  copy->train(is_training());
  return copy;
}

void ParameterListImpl::pretty_print(std::ostream& stream) const {
  OrderedDict<std::string, Tensor> params;
  for (const auto& item : items_) params.insert(item.key(), item.value());
  print_parameters(stream, name(), params);
}

// ---- ParameterDict ----

ParameterDictImpl::ParameterDictImpl(const Dict& params) { update(params); }

ParameterDictImpl::ParameterDictImpl(
    const std::vector<std::pair<std::string, Tensor>>& params) {
  for (const auto& [key, param] : params) insert(key, param);
}

Tensor ParameterDictImpl::insert(const std::string& key, Tensor param) {
  TANDEM_CHECK(param.defined(), "ParameterDict::insert: '", key, "' is undefined");
  const bool requires_grad = param.requires_grad();
  Tensor registered = register_parameter(key, std::move(param), requires_grad);
  items_.insert(key, registered);
  return registered;
}

void ParameterDictImpl::update(const Dict& params) {
  for (const auto& item : params) {
    if (Tensor* existing = items_.find(item.key())) {
      NoGradGuard no_grad;
      existing->set_data(item.value().detach());
      existing->set_requires_grad(item->requires_grad());
    } else {
      insert(item.key(), item.value());
    }
  }
}

Tensor ParameterDictImpl::get(const std::string& key) const {
  const Tensor* param = items_.find(key);
  TANDEM_CHECK_INDEX(
      param != nullptr, "ParameterDict: no parameter under the key '", key, "'");
  return *param;
}

std::shared_ptr<Module> ParameterDictImpl::clone(
    const std::optional<Device>& device) const {
  auto copy = std::make_shared<ParameterDictImpl>();
  for (const auto& item : items_) copy->insert(item.key(), copy_of(item.value(), device));
  copy->train(is_training());
  return copy;
}

void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  print_parameters(stream, name(), items_);
}

}  // namespace tandem::nn
