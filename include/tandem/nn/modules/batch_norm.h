// BatchNorm1d, BatchNorm2d and BatchNorm3d, as LibTorch's
// torch::nn::BatchNorm1d/2d/3d.
//
// While training, each forward normalises with the batch's statistics per
// channel and moves the running statistics towards them (running_var
// towards the unbiased variance) and counts the batch in
// num_batches_tracked; in eval mode it normalises with the running
// statistics. The state_dict keys are PyTorch's: weight, bias,
// running_mean, running_var, num_batches_tracked (int64, 0-dim).
//
//   tandem::nn::BatchNorm2d bn(32);
//   auto y = bn->forward(x);     // x: [N, 32, H, W]; updates bn->running_mean
//   bn->eval();
//   auto z = bn->forward(x);     // uses the running statistics
//   std::cout << bn;  // BatchNorm2d(32, eps=1e-05, momentum=0.1, affine=true,
//                     //             track_running_stats=true)
#pragma once

#include <ostream>

#include "tandem/core/tensor.h"
#include "tandem/nn/batch_statistics.h"
#include "tandem/nn/cloneable.h"
#include "tandem/nn/module_holder.h"
#include "tandem/nn/options/batch_norm.h"

namespace tandem::nn {

/// The parameters, buffers and forward that BatchNorm1d/2d/3d share; they differ only in
/// the input ranks they accept.
template <typename Derived>
class BatchNormImplBase : public Cloneable<Derived>, public BatchStatistics {
 public:
  explicit BatchNormImplBase(const BatchNormOptions& options);

  /// Creates the parameters (if affine) and buffers (if
  /// track_running_stats) and initialises them.
  void reset() override;
  /// running_mean to 0, running_var to 1, num_batches_tracked to 0.
  void reset_running_stats();
  /// reset_running_stats(), and weight to 1, bias to 0.
  void reset_parameters();
  void pretty_print(std::ostream& stream) const override;
  Tensor forward(const Tensor& input);
  /// While training, or always without running statistics.
  bool uses_batch_statistics() const override {
    return this->is_training() || !options.track_running_stats();
  }

  BatchNormOptions options;
  /// [C]; undefined unless options.affine().
  Tensor weight;
  Tensor bias;
  /// [C] and an int64 0-dim count; undefined unless track_running_stats.
  Tensor running_mean;
  Tensor running_var;
  Tensor num_batches_tracked;

 private:
  // Throws unless `input` has a rank this layer accepts.
  virtual void check_input_dim(const Tensor& input) const = 0;
};

/// Over [N, C] or [N, C, L] input.
class BatchNorm1dImpl : public BatchNormImplBase<BatchNorm1dImpl> {
 public:
  using BatchNormImplBase<BatchNorm1dImpl>::BatchNormImplBase;
  explicit BatchNorm1dImpl(int64_t num_features)
      : BatchNorm1dImpl(BatchNormOptions(num_features)) {}

 private:
  void check_input_dim(const Tensor& input) const override;
};
TANDEM_MODULE(BatchNorm1d);

/// Over [N, C, H, W] input.
class BatchNorm2dImpl : public BatchNormImplBase<BatchNorm2dImpl> {
 public:
  using BatchNormImplBase<BatchNorm2dImpl>::BatchNormImplBase;
  explicit BatchNorm2dImpl(int64_t num_features)
      : BatchNorm2dImpl(BatchNormOptions(num_features)) {}

 private:
  void check_input_dim(const Tensor& input) const override;
};
TANDEM_MODULE(BatchNorm2d);

/// Over [N, C, D, H, W] input.
class BatchNorm3dImpl : public BatchNormImplBase<BatchNorm3dImpl> {
 public:
  using BatchNormImplBase<BatchNorm3dImpl>::BatchNormImplBase;
  explicit BatchNorm3dImpl(int64_t num_features)
      : BatchNorm3dImpl(BatchNormOptions(num_features)) {}

 private:
  void check_input_dim(const Tensor& input) const override;
};
TANDEM_MODULE(BatchNorm3d);

extern template class BatchNormImplBase<BatchNorm1dImpl>;
extern template class BatchNormImplBase<BatchNorm2dImpl>;
extern template class BatchNormImplBase<BatchNorm3dImpl>;

}  // namespace tandem::nn
