// Helpers for invariant mode's tests (issue 18), in one process
// (tests/parallel/invariant_test.cpp) and across processes
// (tests/distributed/ddp_invariant_test.cpp): small classification tasks,
// a 20-step training run, and a bitwise comparison of what it reached.
//
//   const auto want = train(mlp_with_dropout(), loss_of_dp, *dp, Optimizer::kAdam);
//   EXPECT_TRUE(same_bits(want, got));
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tandem/tandem.h"

namespace tandem::testing {

enum class Optimizer { kSgdMomentum, kAdam };

/// SGD with momentum 0.9 (lr 0.05), or Adam (lr 0.01).
std::unique_ptr<optim::Optimizer> make_optimizer(Optimizer which,
                                                 std::vector<Tensor> params);
/// "SgdMomentum" or "Adam", for test names.
std::string optimizer_name(Optimizer which);

/// A classification task: a model, its inputs for `rows` samples, classes.
struct Task {
  std::string name;
  std::function<nn::Sequential()> make;
  std::function<Tensor(Generator&, int64_t rows)> inputs;
  int64_t classes;
  int64_t batch;  // not a multiple of 2, 3, 4 or the micro-batch
};

/// Linear-ReLU-Dropout-Linear-ReLU-Linear on 20 features, 5 classes,
/// batches of 50.
Task mlp_with_dropout();
/// Conv2d-ReLU-Dropout2d-MaxPool2d-Conv2d-ReLU-Flatten-Dropout-Linear on
/// 8x8 images, 3 classes, batches of 37.
Task cnn_without_batch_norm();
/// The second seed's Model: one Linear(5, 2), batches of 30.
Task tutorial_model();

/// Trains `trained` 20 steps on batches of `task` drawn from a generator
/// seeded alike everywhere, the loss of a step being `loss(x, y)` for the
/// whole batch's inputs and targets; returns its parameters and the
/// optimizer's state, by name.
using StepLoss = std::function<Tensor(const Tensor& x, const Tensor& y)>;
std::map<std::string, Tensor> train(const Task& task,
                                    const StepLoss& loss,
                                    nn::Module& trained,
                                    Optimizer which);

/// Every tensor of `got` has the bytes of the same tensor in `want`.
::testing::AssertionResult same_bits(const std::map<std::string, Tensor>& want,
                                     const std::map<std::string, Tensor>& got);

}  // namespace tandem::testing
