// Options for TransformerEncoderLayer and TransformerDecoderLayer, with
// LibTorch's chainable setters and defaults (dim_feedforward 2048, dropout
// 0.1, activation kReLU) and PyTorch 1.13's layer_norm_eps, batch_first and
// norm_first, which LibTorch 1.13 lacks. The activation is tandem::kReLU,
// tandem::kGELU, "relu" / "gelu" as in PyTorch, or any Tensor(const Tensor&).
//
//   tandem::nn::TransformerEncoderLayer layer(
//       tandem::nn::TransformerEncoderLayerOptions(512, 8)
//           .dim_feedforward(1024).activation(tandem::kGELU).norm_first(true));
//   auto opts = tandem::nn::TransformerDecoderLayerOptions(64, 4).activation(
//       [](const tandem::Tensor& x) { return tandem::tanh(x); });
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "tandem/core/tensor.h"
#include "tandem/nn/init.h"  // Nonlinearity, kReLU

namespace tandem {
namespace enumtype {
/// The type of tandem::kGELU (LibTorch's torch::enumtype::kGELU).
struct kGELU {};
}  // namespace enumtype
/// The GELU activation, for TransformerActivation.
inline constexpr enumtype::kGELU kGELU{};
}  // namespace tandem

namespace tandem::nn {

/// The feed-forward activation of the transformer layers: ReLU (default),
/// GELU (exact, not the tanh approximation) or a function.
class TransformerActivation {
 public:
  enum class Kind { ReLU, GELU, Function };

  TransformerActivation() = default;
  /// tandem::kReLU; any other Nonlinearity is an error.
  TransformerActivation(Nonlinearity nonlinearity);  // implicit
  TransformerActivation(enumtype::kGELU)             // implicit
      : kind_(Kind::GELU) {}
  /// "relu" or "gelu", as PyTorch's strings.
  TransformerActivation(const std::string& name);  // implicit
  TransformerActivation(const char* name)          // implicit
      : TransformerActivation(std::string(name)) {}
  template <typename F>
  requires(!std::same_as<std::decay_t<F>, TransformerActivation> &&
           std::is_invocable_r_v<Tensor, F, const Tensor&>)
      TransformerActivation(F function)  // implicit
      : kind_(Kind::Function), function_(std::move(function)) {}

  Kind kind() const noexcept { return kind_; }
  Tensor operator()(const Tensor& x) const;
  /// "relu", "gelu" or "function".
  std::string name() const;

 private:
  Kind kind_ = Kind::ReLU;
  std::function<Tensor(const Tensor&)> function_;
};

namespace detail {

/// What the encoder and decoder layers' options share; setters return the
/// derived type.
template <typename Derived>
class TransformerLayerOptionsBase {
 public:
  TransformerLayerOptionsBase(int64_t d_model, int64_t nhead)
      : d_model_(d_model), nhead_(nhead) {}

  Derived& d_model(int64_t value) { return set(d_model_, value); }
  Derived& nhead(int64_t value) { return set(nhead_, value); }
  /// Width of the feed-forward block (default 2048).
  Derived& dim_feedforward(int64_t value) { return set(dim_feedforward_, value); }
  /// Dropout probability in attention and after each block (default 0.1).
  Derived& dropout(double value) { return set(dropout_, value); }
  /// Feed-forward activation (default kReLU).
  Derived& activation(TransformerActivation value) {
    return set(activation_, std::move(value));
  }
  /// eps of the layer norms (default 1e-5).
  Derived& layer_norm_eps(double value) { return set(layer_norm_eps_, value); }
  /// Inputs as [batch, seq, feature] (default false: [seq, batch, feature]).
  Derived& batch_first(bool value) { return set(batch_first_, value); }
  /// Layer norm before each block (pre-LN) instead of after (default false).
  Derived& norm_first(bool value) { return set(norm_first_, value); }

  int64_t d_model() const noexcept { return d_model_; }
  int64_t nhead() const noexcept { return nhead_; }
  int64_t dim_feedforward() const noexcept { return dim_feedforward_; }
  double dropout() const noexcept { return dropout_; }
  const TransformerActivation& activation() const noexcept { return activation_; }
  double layer_norm_eps() const noexcept { return layer_norm_eps_; }
  bool batch_first() const noexcept { return batch_first_; }
  bool norm_first() const noexcept { return norm_first_; }

 private:
  template <typename T>
  Derived& set(T& field, T value) {
    field = std::move(value);
    return static_cast<Derived&>(*this);
  }

  int64_t d_model_;
  int64_t nhead_;
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  TransformerActivation activation_;
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false;
  bool norm_first_ = false;
};

}  // namespace detail

class TransformerEncoderLayerOptions
    : public detail::TransformerLayerOptionsBase<TransformerEncoderLayerOptions> {
 public:
  using TransformerLayerOptionsBase::TransformerLayerOptionsBase;
};

class TransformerDecoderLayerOptions
    : public detail::TransformerLayerOptionsBase<TransformerDecoderLayerOptions> {
 public:
  using TransformerLayerOptionsBase::TransformerLayerOptionsBase;
};

}  // namespace tandem::nn
