// Tensor creation, with LibTorch's names and argument order.
//
//   auto a = tandem::zeros({2, 3});                        // float32, cpu
//   auto b = tandem::arange(0, 10, 2, tandem::kInt64);
//   auto c = tandem::randn({4, 4}, tandem::kFloat64);
//   auto d = tandem::tensor({1.0f, 2.0f, 3.0f});
//   auto e = tandem::from_blob(ptr, {2, 2}, tandem::kFloat32);  // no copy
//   auto f = tandem::randn(3, tandem::kF64);                   // sizes {3}
//   auto g = tandem::tensor(2.5, tandem::kF64);                // 0-dim
#pragma once

#include <concepts>
#include <functional>
#include <initializer_list>
#include <type_traits>
#include <vector>

#include "tandem/core/generator.h"
#include "tandem/core/tensor.h"

namespace tandem {

Tensor empty(const IntList& sizes, const TensorOptions& options = {});
Tensor zeros(const IntList& sizes, const TensorOptions& options = {});
Tensor ones(const IntList& sizes, const TensorOptions& options = {});
Tensor full(const IntList& sizes, Scalar value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, Scalar value, const TensorOptions& options = {});

// Note [Sizes given as one integer]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// LibTorch's IntArrayRef converts from one int64_t, so `torch::zeros(n)`
// and `x.view(-1)` mean sizes {n} and {-1}. tandem's IntList is an owning
// vector whose `IntList v(n)` makes n zeros (as std::vector; the data layer
// and others build shapes that way), so a converting constructor from
// int64_t would silently turn those into one-element lists. Instead the
// factories (and view/reshape, and the reductions' dim) have an overload
// for one integer. It is a template so that a braced list never picks it:
// `zeros({})` stays 0-dim and `zeros({5})` stays sizes {5}.
template <std::integral I>
Tensor empty(I size, const TensorOptions& options = {}) {
  return empty(IntList{static_cast<int64_t>(size)}, options);
}
template <std::integral I>
Tensor zeros(I size, const TensorOptions& options = {}) {
  return zeros(IntList{static_cast<int64_t>(size)}, options);
}
template <std::integral I>
Tensor ones(I size, const TensorOptions& options = {}) {
  return ones(IntList{static_cast<int64_t>(size)}, options);
}
template <std::integral I>
Tensor full(I size, Scalar value, const TensorOptions& options = {}) {
  return full(IntList{static_cast<int64_t>(size)}, value, options);
}

/// Values start, start+step, ... below end. Integer arguments give int64
/// unless options say otherwise; floating ones give float32.
Tensor arange(Scalar end, const TensorOptions& options = {});
Tensor arange(Scalar start, Scalar end, const TensorOptions& options = {});
Tensor arange(Scalar start, Scalar end, Scalar step, const TensorOptions& options = {});

/// Uniform in [0, 1).
Tensor rand(const IntList& sizes, const TensorOptions& options = {});
Tensor rand(const IntList& sizes, Generator& gen, const TensorOptions& options = {});
/// Standard normal.
Tensor randn(const IntList& sizes, const TensorOptions& options = {});
Tensor randn(const IntList& sizes, Generator& gen, const TensorOptions& options = {});
/// One size (Note [Sizes given as one integer]).
template <std::integral I>
Tensor rand(I size, const TensorOptions& options = {}) {
  return rand(IntList{static_cast<int64_t>(size)}, options);
}
template <std::integral I>
Tensor randn(I size, const TensorOptions& options = {}) {
  return randn(IntList{static_cast<int64_t>(size)}, options);
}
/// Integers in [low, high); int64 unless options say otherwise.
Tensor randint(int64_t high, const IntList& sizes, const TensorOptions& options = kInt64);
Tensor randint(int64_t low,
               int64_t high,
               const IntList& sizes,
               const TensorOptions& options = kInt64);
Tensor randint(int64_t low,
               int64_t high,
               const IntList& sizes,
               Generator& gen,
               const TensorOptions& options = kInt64);
Tensor rand_like(const Tensor& t);
Tensor randn_like(const Tensor& t);

/// A 1-D tensor holding a copy of `values` (dtype from T unless given).
template <typename T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {});
template <typename T>
Tensor tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  return tensor(std::vector<T>(values), options);
}
/// A 0-dim tensor holding `value` (dtype from T unless given), as
/// LibTorch's torch::tensor(2.5). A braced list still makes a 1-D tensor:
/// tensor({5}) has shape [1].
template <typename T>
requires(std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, int64_t> ||
         std::same_as<T, int> || std::same_as<T, bool>) Tensor
    tensor(T value, const TensorOptions& options = {}) {
  Tensor t = tensor(std::vector<T>{value}, options.requires_grad(false)).reshape({});
  return options.requires_grad() ? t.requires_grad_(true) : t;
}
/// A 0-dim tensor holding `value`.
Tensor scalar_tensor(Scalar value, const TensorOptions& options = {});

/// `steps` values from start to end inclusive, evenly spaced (PyTorch's
/// formula: the first half counts up from start, the second down from end).
Tensor linspace(Scalar start,
                Scalar end,
                int64_t steps,
                const TensorOptions& options = {});
/// The n x m identity (m = n unless given).
Tensor eye(int64_t n, const TensorOptions& options = {});
Tensor eye(int64_t n, int64_t m, const TensorOptions& options = {});

/// A tensor over memory the caller owns (no copy); `deleter`, if given,
/// runs when the last tensor using it is gone. Strides default to row-major.
Tensor from_blob(void* data, const IntList& sizes, const TensorOptions& options = {});
Tensor from_blob(void* data,
                 const IntList& sizes,
                 const IntList& strides,
                 const TensorOptions& options = {});
Tensor from_blob(void* data,
                 const IntList& sizes,
                 std::function<void(void*)> deleter,
                 const TensorOptions& options = {});

}  // namespace tandem
