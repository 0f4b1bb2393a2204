// Activation modules: ReLU, GELU, Tanh, Sigmoid, Softmax, LogSoftmax, as
// LibTorch's torch::nn modules of the same names. Each forwards to the op
// in tandem/ops/activation.h.
//
//   tandem::nn::Sequential net(tandem::nn::Linear(4, 8), tandem::nn::ReLU(),
//                              tandem::nn::Linear(8, 3),
//                              tandem::nn::LogSoftmax(/*dim=*/1));
//   tandem::nn::GELU gelu(tandem::nn::GELUOptions().approximate("tanh"));
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/activation.h"

namespace tandem::nn {

class ReLUImpl : public Cloneable<ReLUImpl> {
 public:
  explicit ReLUImpl(const ReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  /// Overwrites `input` when options.inplace().
  Tensor forward(Tensor input);

  ReLUOptions options;
};
TANDEM_MODULE(ReLU);

class GELUImpl : public Cloneable<GELUImpl> {
 public:
  explicit GELUImpl(GELUOptions options = {});
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  GELUOptions options;
};
TANDEM_MODULE(GELU);

class TanhImpl : public Cloneable<TanhImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(Tanh);

class SigmoidImpl : public Cloneable<SigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(Sigmoid);

class SoftmaxImpl : public Cloneable<SoftmaxImpl> {
 public:
  explicit SoftmaxImpl(int64_t dim) : options(dim) {}
  explicit SoftmaxImpl(const SoftmaxOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  SoftmaxOptions options;
};
TANDEM_MODULE(Softmax);

class LogSoftmaxImpl : public Cloneable<LogSoftmaxImpl> {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : options(dim) {}
  explicit LogSoftmaxImpl(const LogSoftmaxOptions& options) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  LogSoftmaxOptions options;
};
TANDEM_MODULE(LogSoftmax);

}  // namespace tandem::nn
