// Functional: a function of a tensor wrapped as a module, so that it can go
// in a Sequential, as LibTorch's torch::nn::Functional. Extra arguments are
// bound after the input. It has no parameters and prints as Functional().
//
//   tandem::nn::Sequential net(
//       tandem::nn::Linear(4, 4),
//       tandem::nn::Functional([](tandem::Tensor x) { return x.relu(); }),
//       tandem::nn::Functional([](tandem::Tensor x, double s) { return x * s; }, 0.5));
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"

namespace tandem::nn {

class FunctionalImpl : public Cloneable<FunctionalImpl> {
 public:
  using Function = std::function<Tensor(Tensor)>;

  explicit FunctionalImpl(Function function);
  /// Binds `args` after the input: forward(x) calls function(x, args...).
  template <typename SomeFunction, typename... Args>
  requires(sizeof...(Args) > 0 &&
           std::is_invocable_r_v<Tensor,
                                 SomeFunction,
                                 Tensor,
                                 Args...>) explicit FunctionalImpl(SomeFunction function,
                                                                   Args&&... args)
      : FunctionalImpl(Function([function = std::move(function),
                                 bound = std::make_tuple(std::forward<Args>(args)...)](
                                    Tensor input) {
          return std::apply(
              [&](const auto&... a) { return Tensor(function(std::move(input), a...)); },
              bound);
        })) {}

  void reset() override {}
  Tensor forward(Tensor input);
  Tensor operator()(Tensor input) { return forward(std::move(input)); }
  void pretty_print(std::ostream& stream) const override;

 private:
  Function function_;
};

TANDEM_MODULE(Functional);

}  // namespace tandem::nn
