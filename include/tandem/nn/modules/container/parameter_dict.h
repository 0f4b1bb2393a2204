// ParameterDict: tensors under string keys, in insertion order, registered
// as the module's own parameters under those keys, as LibTorch's
// torch::nn::ParameterDict. A tensor keeps its requires_grad.
//
//   tandem::nn::ParameterDict params({{"scale", tandem::ones({3})},
//                                     {"shift", tandem::zeros({3})}});
//   params->insert("gain", tandem::ones({1}));
//   tandem::Tensor s = params["scale"];
//   for (const auto& item : *params) std::cout << item.key() << "\n";
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/ordered_dict.h"

namespace tandem::nn {

class ParameterDictImpl : public Cloneable<ParameterDictImpl> {
 public:
  using Dict = OrderedDict<std::string, Tensor>;
  using Iterator = Dict::ConstIterator;

  ParameterDictImpl() = default;
  explicit ParameterDictImpl(const Dict& params);
  explicit ParameterDictImpl(const std::vector<std::pair<std::string, Tensor>>& params);

  void reset() override {}
  /// Copies every tensor (to `device` if given), keeping requires_grad.
  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override;

  /// Registers `param` under `key`, which must be new; returns it.
  Tensor insert(const std::string& key, Tensor param);
  /// Inserts new keys; for a key already there, its parameter takes the
  /// new value in place (Tensor::set_data), so handles to it stay valid.
  void update(const Dict& params);
  void update(const ParameterDictImpl& other) { update(other.items_); }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.is_empty(); }
  bool contains(const std::string& key) const { return items_.contains(key); }
  std::vector<std::string> keys() const { return items_.keys(); }
  std::vector<Tensor> values() const { return items_.values(); }
  std::vector<std::pair<std::string, Tensor>> items() const { return items_.pairs(); }
  Iterator begin() const { return items_.begin(); }
  Iterator end() const { return items_.end(); }
  /// The parameter under `key` (a handle).
  Tensor get(const std::string& key) const;
  Tensor operator[](const std::string& key) const { return get(key); }

  /// ParameterDict(
  ///   (scale): Parameter containing: [float32 of size [3]]
  /// )
  void pretty_print(std::ostream& stream) const override;

 private:
  // The registered parameters, the same handles as the Module's own.
  Dict items_{"Parameter"};
};

TANDEM_MODULE(ParameterDict);

}  // namespace tandem::nn
