// Options for the activation modules and their functional forms, with
// LibTorch's names and chainable setters.
//
//   tandem::nn::GELU gelu(tandem::nn::GELUOptions().approximate("tanh"));
//   tandem::nn::Softmax softmax(tandem::nn::SoftmaxOptions(/*dim=*/1));
//   auto p = F::softmax(x, F::SoftmaxFuncOptions(1).dtype(tandem::kFloat64));
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tandem/core/dtype.h"

namespace tandem::nn {

class ReLUOptions {
 public:
  /* implicit */ ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // NOLINT
  /// Overwrite the input instead of allocating the result.
  ReLUOptions& inplace(bool value) {
    inplace_ = value;
    return *this;
  }
  bool inplace() const noexcept { return inplace_; }

 private:
  bool inplace_;
};

class GELUOptions {
 public:
  /// "none" (the exact, erf-based form) or "tanh".
  GELUOptions& approximate(std::string value) {
    approximate_ = std::move(value);
    return *this;
  }
  const std::string& approximate() const noexcept { return approximate_; }

 private:
  std::string approximate_ = "none";
};

class SoftmaxOptions {
 public:
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT(google-explicit-constructor)
  SoftmaxOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  int64_t dim() const noexcept { return dim_; }

 private:
  int64_t dim_;
};

class LogSoftmaxOptions {
 public:
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // NOLINT(google-explicit-constructor)
  LogSoftmaxOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  int64_t dim() const noexcept { return dim_; }

 private:
  int64_t dim_;
};

namespace functional {

using ReLUFuncOptions = ReLUOptions;
using GELUFuncOptions = GELUOptions;

/// dim, and optionally a dtype the input is converted to first.
class SoftmaxFuncOptions {
 public:
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // NOLINT(google-explicit-constructor)
  SoftmaxFuncOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  SoftmaxFuncOptions& dtype(std::optional<ScalarType> value) {
    dtype_ = value;
    return *this;
  }
  int64_t dim() const noexcept { return dim_; }
  const std::optional<ScalarType>& dtype() const noexcept { return dtype_; }

 private:
  int64_t dim_;
  std::optional<ScalarType> dtype_;
};

class LogSoftmaxFuncOptions {
 public:
  LogSoftmaxFuncOptions(int64_t dim)
      : dim_(dim) {}  // NOLINT(google-explicit-constructor)
  LogSoftmaxFuncOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  LogSoftmaxFuncOptions& dtype(std::optional<ScalarType> value) {
    dtype_ = value;
    return *this;
  }
  int64_t dim() const noexcept { return dim_; }
  const std::optional<ScalarType>& dtype() const noexcept { return dtype_; }

 private:
  int64_t dim_;
  std::optional<ScalarType> dtype_;
};

}  // namespace functional
}  // namespace tandem::nn
