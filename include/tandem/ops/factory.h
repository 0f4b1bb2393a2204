// Tensor creation, with LibTorch's names and argument order.
//
//   auto a = tandem::zeros({2, 3});                        // float32, cpu
//   auto b = tandem::arange(0, 10, 2, tandem::kInt64);
//   auto c = tandem::randn({4, 4}, tandem::kFloat64);
//   auto d = tandem::tensor({1.0f, 2.0f, 3.0f});
//   auto e = tandem::from_blob(ptr, {2, 2}, tandem::kFloat32);  // no copy
#pragma once

#include <functional>
#include <initializer_list>
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
/// A 0-dim tensor holding `value`.
Tensor scalar_tensor(Scalar value, const TensorOptions& options = {});

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
