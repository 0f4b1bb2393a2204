// Activation modules: ReLU, GELU, Tanh, Sigmoid, Softmax, LogSoftmax,
// LeakyReLU, ELU, SELU, SiLU, Mish, Softplus, Hardtanh, PReLU, LogSigmoid,
// Softsign, as LibTorch's torch::nn modules of the same names. Each
// forwards to the op in tandem/ops/activation.h; PReLU owns its slopes as
// the parameter "weight".
//
//   tandem::nn::Sequential net(tandem::nn::Linear(4, 8), tandem::nn::ReLU(),
//                              tandem::nn::Linear(8, 3),
//                              tandem::nn::LogSoftmax(/*dim=*/1));
//   tandem::nn::GELU gelu(tandem::nn::GELUOptions().approximate("tanh"));
//   tandem::nn::PReLU prelu(tandem::nn::PReLUOptions().num_parameters(16));
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

class LeakyReLUImpl : public Cloneable<LeakyReLUImpl> {
 public:
  explicit LeakyReLUImpl(const LeakyReLUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  /// Overwrites `input` when options.inplace().
  Tensor forward(Tensor input);

  LeakyReLUOptions options;
};
TANDEM_MODULE(LeakyReLU);

class ELUImpl : public Cloneable<ELUImpl> {
 public:
  explicit ELUImpl(const ELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);

  ELUOptions options;
};
TANDEM_MODULE(ELU);

class SELUImpl : public Cloneable<SELUImpl> {
 public:
  explicit SELUImpl(const SELUOptions& options = {}) : options(options) {}
  void reset() override {}
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);

  SELUOptions options;
};
TANDEM_MODULE(SELU);

class SiLUImpl : public Cloneable<SiLUImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(SiLU);

class MishImpl : public Cloneable<MishImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(Mish);

class SoftplusImpl : public Cloneable<SoftplusImpl> {
 public:
  explicit SoftplusImpl(const SoftplusOptions& options = {});
  /// Checks beta.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  SoftplusOptions options;
};
TANDEM_MODULE(Softplus);

class HardtanhImpl : public Cloneable<HardtanhImpl> {
 public:
  explicit HardtanhImpl(const HardtanhOptions& options = {});
  /// Checks that min_val <= max_val.
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(Tensor input);

  HardtanhOptions options;
};
TANDEM_MODULE(Hardtanh);

class PReLUImpl : public Cloneable<PReLUImpl> {
 public:
  explicit PReLUImpl(const PReLUOptions& options = {});
  /// Creates weight [num_parameters], every slope options.init().
  void reset() override;
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);

  PReLUOptions options;
  Tensor weight;
};
TANDEM_MODULE(PReLU);

class LogSigmoidImpl : public Cloneable<LogSigmoidImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(LogSigmoid);

class SoftsignImpl : public Cloneable<SoftsignImpl> {
 public:
  void reset() override {}
  Tensor forward(const Tensor& input);
};
TANDEM_MODULE(Softsign);

}  // namespace tandem::nn
