#include "tandem/io/module_io.h"

#include "tandem/core/error.h"

namespace tandem::io {

TensorMap to_tensor_map(const OrderedDict<std::string, Tensor>& state_dict) {
  TensorMap tensors;
  for (const auto& item : state_dict) tensors.emplace(item.key(), item.value());
  return tensors;
}

OrderedDict<std::string, Tensor> to_state_dict(const TensorMap& tensors) {
  OrderedDict<std::string, Tensor> state_dict;
  state_dict.reserve(tensors.size());
  for (const auto& [name, tensor] : tensors) state_dict.insert(name, tensor);
  return state_dict;
}

void save(const nn::Module& module, const std::filesystem::path& path) {
  save_tensors(to_tensor_map(module.state_dict()), path);
}

void load(nn::Module& module, const std::filesystem::path& path) {
  TensorMap tensors = load_tensors(path);
  try {
    module.load_state_dict(to_state_dict(tensors));
  } catch (const Error& e) {
    throw Error(tandem::detail::str("load: '", path.string(), "': ", e.what()));
  }
}

}  // namespace tandem::io
