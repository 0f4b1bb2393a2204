// Options for the activation modules and their functional forms, with
// LibTorch's names and chainable setters.
//
//   tandem::nn::GELU gelu(tandem::nn::GELUOptions().approximate("tanh"));
//   tandem::nn::Softmax softmax(tandem::nn::SoftmaxOptions(/*dim=*/1));
//   auto p = F::softmax(x, F::SoftmaxFuncOptions(1).dtype(tandem::kFloat64));
//   tandem::nn::LeakyReLU leaky(tandem::nn::LeakyReLUOptions().negative_slope(0.2));
//   auto s = F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(10));
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tandem/core/dtype.h"

namespace tandem::nn {

class ReLUOptions {
 public:
  /* implicit */ ReLUOptions(bool inplace = false) : inplace_(inplace) {}  // implicit
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
  SoftmaxOptions(int64_t dim) : dim_(dim) {}  // implicit
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
  LogSoftmaxOptions(int64_t dim) : dim_(dim) {}  // implicit
  LogSoftmaxOptions& dim(int64_t value) {
    dim_ = value;
    return *this;
  }
  int64_t dim() const noexcept { return dim_; }

 private:
  int64_t dim_;
};

class LeakyReLUOptions {
 public:
  LeakyReLUOptions& negative_slope(double value) {
    negative_slope_ = value;
    return *this;
  }
  LeakyReLUOptions& inplace(bool value) {
    inplace_ = value;
    return *this;
  }
  double negative_slope() const noexcept { return negative_slope_; }
  bool inplace() const noexcept { return inplace_; }

 private:
  double negative_slope_ = 1e-2;
  bool inplace_ = false;
};

class ELUOptions {
 public:
  ELUOptions& alpha(double value) {
    alpha_ = value;
    return *this;
  }
  ELUOptions& inplace(bool value) {
    inplace_ = value;
    return *this;
  }
  double alpha() const noexcept { return alpha_; }
  bool inplace() const noexcept { return inplace_; }

 private:
  double alpha_ = 1.0;
  bool inplace_ = false;
};

class SELUOptions {
 public:
  /* implicit */ SELUOptions(bool inplace = false) : inplace_(inplace) {}  // implicit
  SELUOptions& inplace(bool value) {
    inplace_ = value;
    return *this;
  }
  bool inplace() const noexcept { return inplace_; }

 private:
  bool inplace_;
};

class SoftplusOptions {
 public:
  SoftplusOptions& beta(double value) {
    beta_ = value;
    return *this;
  }
  /// Above beta * x > threshold the result is x itself.
  SoftplusOptions& threshold(double value) {
    threshold_ = value;
    return *this;
  }
  double beta() const noexcept { return beta_; }
  double threshold() const noexcept { return threshold_; }

 private:
  double beta_ = 1.0;
  double threshold_ = 20.0;
};

class HardtanhOptions {
 public:
  HardtanhOptions& min_val(double value) {
    min_val_ = value;
    return *this;
  }
  HardtanhOptions& max_val(double value) {
    max_val_ = value;
    return *this;
  }
  HardtanhOptions& inplace(bool value) {
    inplace_ = value;
    return *this;
  }
  double min_val() const noexcept { return min_val_; }
  double max_val() const noexcept { return max_val_; }
  bool inplace() const noexcept { return inplace_; }

 private:
  double min_val_ = -1.0;
  double max_val_ = 1.0;
  bool inplace_ = false;
};

class PReLUOptions {
 public:
  /// 1 (one slope shared by every channel) or the input's channel count.
  PReLUOptions& num_parameters(int64_t value) {
    num_parameters_ = value;
    return *this;
  }
  /// The initial slope.
  PReLUOptions& init(double value) {
    init_ = value;
    return *this;
  }
  int64_t num_parameters() const noexcept { return num_parameters_; }
  double init() const noexcept { return init_; }

 private:
  int64_t num_parameters_ = 1;
  double init_ = 0.25;
};

namespace functional {

using ReLUFuncOptions = ReLUOptions;
using GELUFuncOptions = GELUOptions;
using LeakyReLUFuncOptions = LeakyReLUOptions;
using ELUFuncOptions = ELUOptions;
using SELUFuncOptions = SELUOptions;
using SoftplusFuncOptions = SoftplusOptions;
using HardtanhFuncOptions = HardtanhOptions;

/// dim, and optionally a dtype the input is converted to first.
class SoftmaxFuncOptions {
 public:
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // implicit
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
  LogSoftmaxFuncOptions(int64_t dim) : dim_(dim) {}  // implicit
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
