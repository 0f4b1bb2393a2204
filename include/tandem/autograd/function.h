// Custom autograd functions, as LibTorch writes them: a struct T deriving
// from Function<T> with a static forward and a static backward, called
// through T::apply.
//
//   struct MulConstant : tandem::autograd::Function<MulConstant> {
//     static tandem::Tensor forward(AutogradContext* ctx, tandem::Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static variable_list backward(AutogradContext* ctx, variable_list grads) {
//       return {grads[0] * ctx->saved_data["c"].toDouble(), tandem::Tensor()};
//     }
//   };
//   tandem::Tensor y = MulConstant::apply(x, 5.5);  // y.grad_fn() runs backward
//
// forward takes the context first, then any arguments; it runs with grad
// mode off and returns a Tensor or a variable_list. The Tensor arguments
// (a std::optional<Tensor> that holds one counts as one) are its inputs in
// the graph; tensors inside containers are not looked at (as in LibTorch).
// backward gets one gradient per output and returns one per argument of
// forward, in order: an undefined Tensor for a non-tensor argument or an
// input that needs none. A wrong count, a gradient of the wrong shape,
// device or kind, or a defined one for a non-tensor argument is refused
// with a message naming the function: T::name() if T has a static one,
// else its C++ type name. A gradient whose shape the input broadcasts to is
// summed down to the input's shape, and one of another floating dtype is
// converted, as in LibTorch.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tandem/autograd/autograd_context.h"
#include "tandem/graph/grad_mode.h"

namespace tandem::autograd {

/// The type T::forward returns for these arguments.
template <class X, class... Args>
using forward_t = decltype(X::forward(nullptr, std::declval<Args>()...));

template <class T>
struct Function {
  /// Runs T::forward on `args` and, if grad mode is on and a tensor
  /// argument requires grad, records T::backward as the outputs' grad_fn.
  /// (X only defers the look-up of T::forward until T is complete.)
  template <class X = T, class... Args>
  static auto apply(Args&&... args)
      -> std::enable_if_t<std::is_same_v<X, T>, forward_t<X, Args...>>;
};

namespace detail {

/// T::backward behind a plain function pointer.
using BackwardFunction = tensor_list (*)(AutogradContext* ctx, tensor_list& grads);

/// The C++ type name made readable ("MulConstant", "(anonymous
/// namespace)::MulConstant").
std::string demangle(const char* mangled);

/// The non-template steps of Function<T>::apply: collects the arguments,
/// makes the graph node, then attaches forward's outputs to it and saves
/// what the context asked to save. See Note [Custom function nodes].
class CustomFunctionCall {
 public:
  CustomFunctionCall(std::string name, BackwardFunction backward);
  ~CustomFunctionCall();
  CustomFunctionCall(const CustomFunctionCall&) = delete;
  CustomFunctionCall& operator=(const CustomFunctionCall&) = delete;

  /// One per argument of forward, in order (undefined tensors included:
  /// they are inputs that need no gradient).
  void add_tensor_argument(const Tensor& t);
  void add_non_tensor_argument();
  /// After the arguments: makes the node if history is to be recorded, and
  /// returns the context forward fills.
  AutogradContext* begin();
  /// After forward: checks the context's marks against the arguments and
  /// `outputs`, gives the outputs their history (replacing inputs returned
  /// as they were by aliases of them), and saves the tensors to save.
  void finish(tensor_list& outputs);

 private:
  struct State;
  /// The formula of the node: the user's backward between the checks.
  static tensor_list run_backward(State& state, tensor_list& grads);

  std::shared_ptr<State> state_;
  tensor_list inputs_;  // the tensor arguments, in order
  std::shared_ptr<Node> node_;
};

template <class A>
void add_argument(CustomFunctionCall& call, const A& arg) {
  if constexpr (std::is_base_of_v<Tensor, A>) {
    call.add_tensor_argument(arg);
  } else if constexpr (std::is_same_v<A, std::optional<Tensor>>) {
    // An empty optional is no input at all (as in LibTorch).
    if (arg.has_value() && arg->defined()) {
      call.add_tensor_argument(*arg);
    } else {
      call.add_non_tensor_argument();
    }
  } else {
    call.add_non_tensor_argument();
  }
}

template <class T>
const std::string& function_name() {
  static const std::string name = [] {
    if constexpr (requires { std::string(T::name()); }) {
      return std::string(T::name());
    } else {
      return demangle(typeid(T).name());
    }
  }();
  return name;
}

template <class T>
tensor_list call_backward(AutogradContext* ctx, tensor_list& grads) {
  return T::backward(ctx, grads);
}

}  // namespace detail

template <class T>
template <class X, class... Args>
auto Function<T>::apply(Args&&... args)
    -> std::enable_if_t<std::is_same_v<X, T>, forward_t<X, Args...>> {
  using Output = forward_t<X, Args...>;
  static_assert(std::is_same_v<Output, Tensor> || std::is_same_v<Output, tensor_list>,
                "Function<T>::apply: T::forward must return a Tensor or a variable_list");
  detail::CustomFunctionCall call(detail::function_name<T>(), &detail::call_backward<T>);
  (detail::add_argument(call, args), ...);
  AutogradContext* ctx = call.begin();
  tensor_list outputs;
  {
    AutoGradMode no_grad(false);
    if constexpr (std::is_same_v<Output, Tensor>) {
      outputs.push_back(T::forward(ctx, std::forward<Args>(args)...));
    } else {
      outputs = T::forward(ctx, std::forward<Args>(args)...);
    }
  }
  call.finish(outputs);
  if constexpr (std::is_same_v<Output, Tensor>) {
    return std::move(outputs[0]);
  } else {
    return outputs;
  }
}

}  // namespace tandem::autograd
