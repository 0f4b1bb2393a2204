// ParameterList: tensors held in a list and registered as the module's own
// parameters "0", "1", ..., as LibTorch's torch::nn::ParameterList. A
// tensor keeps its requires_grad. Its parameters are the owner's
// ("weights.0"), saved by state_dict(), moved by to(), cloned by clone()
// and replicated by DataParallel.
//
//   tandem::nn::ParameterList weights(tandem::randn({4, 4}), tandem::randn({4}));
//   weights->append(tandem::zeros({2}).requires_grad_());
//   for (const auto& item : *weights) std::cout << item.key() << item->sizes();
//   tandem::Tensor w0 = weights[0];
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/ordered_dict.h"

namespace tandem::nn {

class ParameterListImpl : public Cloneable<ParameterListImpl> {
 public:
  using Item = OrderedDict<std::string, Tensor>::Item;
  using Iterator = std::vector<Item>::const_iterator;

  ParameterListImpl() = default;
  template <typename... Tensors>
  requires(sizeof...(Tensors) > 0 &&
           (std::is_convertible_v<Tensors, Tensor> &&
            ...)) explicit ParameterListImpl(Tensors&&... params) {
    (append(Tensor(std::forward<Tensors>(params))), ...);
  }

  void reset() override {}
  /// Copies every tensor (to `device` if given), keeping requires_grad.
  std::shared_ptr<Module> clone(
      const std::optional<Device>& device = std::nullopt) const override;

  /// Registers `param` under the next index; returns it.
  Tensor append(Tensor param);
  /// append() for each tensor of a container (a vector, a ParameterList).
  template <typename Container>
  void extend(const Container& container) {
    for (const auto& param : container) append_any(param);
  }

  size_t size() const noexcept { return items_.size(); }
  bool is_empty() const noexcept { return items_.empty(); }
  Iterator begin() const { return items_.begin(); }
  Iterator end() const { return items_.end(); }
  /// The parameter at `index` (a handle: in-place changes reach the list).
  Tensor at(size_t index) const;
  Tensor operator[](size_t index) const { return at(index); }

  /// ParameterList(
  ///   (0): Parameter containing: [float32 of size [4, 4]]
  /// )
  void pretty_print(std::ostream& stream) const override;

 private:
  Tensor append_any(const Tensor& param) { return append(param); }
  Tensor append_any(const Item& item) { return append(item.value()); }

  // The registered parameters, for indexing and iteration: the same handles
  // as the Module's own (to() and load_state_dict change them in place).
  std::vector<Item> items_;
};

TANDEM_MODULE(ParameterList);

}  // namespace tandem::nn
