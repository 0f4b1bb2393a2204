// Transforms with LibTorch's shape, applied to a dataset's batches by
// map(): Normalize scales each example's data, Stack collates a vector of
// examples into one batched example.
//
//   auto train = tandem::data::datasets::MNIST(root)
//                    .map(tandem::data::transforms::Normalize<>(0.2860, 0.3530))
//                    .map(tandem::data::transforms::Stack<>());
//
// Normalize also works on a whole tensor at once, which is how to
// normalise an in-memory dataset before a TensorDataset:
//   Tensor images = Normalize<>(0.2860, 0.3530)(mnist.images());
#pragma once

#include <utility>
#include <vector>

#include "tandem/data/example.h"

namespace tandem::data::transforms {

template <typename InputBatch, typename OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;

  BatchTransform() = default;
  BatchTransform(const BatchTransform&) = default;
  BatchTransform(BatchTransform&&) noexcept = default;
  BatchTransform& operator=(const BatchTransform&) = default;
  BatchTransform& operator=(BatchTransform&&) noexcept = default;
  virtual ~BatchTransform() = default;

  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

/// A transform of single examples, applied to each example of a batch.
template <typename Input, typename Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;

  virtual Output apply(Input input) = 0;

  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> output;
    output.reserve(input_batch.size());
    for (Input& input : input_batch) output.push_back(apply(std::move(input)));
    return output;
  }
};

/// A transform of an example's data tensor; the target passes through.
template <typename Target = Tensor>
class TensorTransform
    : public Transform<Example<Tensor, Target>, Example<Tensor, Target>> {
 public:
  virtual Tensor operator()(Tensor input) = 0;

  Example<Tensor, Target> apply(Example<Tensor, Target> input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

namespace detail {
/// `values` as a float32 [C, 1, 1] tensor: one value per channel of a
/// [..., C, H, W] image. Throws naming `what` when empty.
Tensor channel_values(const std::vector<double>& values, const char* what);
}  // namespace detail

/// (data - mean) / stddev, with one mean and stddev for all channels or one
/// per channel (dim -3 of [C, H, W] or [N, C, H, W] images).
template <typename Target = Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(double mean, double stddev)
      : Normalize(std::vector<double>{mean}, std::vector<double>{stddev}) {}
  Normalize(const std::vector<double>& mean, const std::vector<double>& stddev)
      : mean_(detail::channel_values(mean, "mean")),
        stddev_(detail::channel_values(stddev, "stddev")) {
    TANDEM_CHECK(mean.size() == stddev.size(),
                 "Normalize: expected as many stddev values as mean values, got ",
                 stddev.size(),
                 " and ",
                 mean.size());
    for (double s : stddev) {
      TANDEM_CHECK(s != 0, "Normalize: stddev must not be 0");
    }
  }

  Tensor operator()(Tensor input) override { return input.sub(mean_).div(stddev_); }

  const Tensor& mean() const { return mean_; }
  const Tensor& stddev() const { return stddev_; }

 private:
  Tensor mean_;
  Tensor stddev_;
};

/// A batch transform that turns a vector of examples into one example.
template <typename BatchType>
using Collation = BatchTransform<BatchType, typename BatchType::value_type>;

/// Stacks the examples' data (and targets) along a new first dim.
template <typename T = Example<>>
struct Stack;

template <>
struct Stack<Example<>> : public Collation<std::vector<Example<>>> {
  Example<> apply_batch(std::vector<Example<>> examples) override;
};

template <>
struct Stack<TensorExample> : public Collation<std::vector<TensorExample>> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override;
};

}  // namespace tandem::data::transforms
