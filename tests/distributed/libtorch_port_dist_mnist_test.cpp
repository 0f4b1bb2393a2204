// The C++ frontend's distributed MNIST example (pytorch/examples,
// cpp/distributed/dist-mnist.cpp) ported by renaming: `torch::` became
// `tandem::`, `c10d::` became `tandem::c10d::`, and the includes tandem's.
// Its main() is dist_mnist_main() below; the lines that differ otherwise
// say "port:" and why. It runs in every distributed ctest entry (one, two
// and three processes), on a slice of Fashion-MNIST, and must compute the
// right numbers: every rank ends with the same weights, those of one
// process that takes each step over the union of the ranks' batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "distributed/distributed_testing.h"
#include "tandem/distributed/c10d.h"  // was <c10d/ProcessGroupMPI.hpp>
#include "tandem/tandem.h"            // was <torch/torch.h>

namespace {

// port: the example reads all of MNIST for 10 epochs; the test reads the
// first examples of Fashion-MNIST for 2. A LibTorch user's own dataset, as
// LibTorch's docs write one (torch::data::Dataset<Self>).
constexpr size_t kTrainExamples = 198;  // no rank's last batch is of one example
constexpr size_t kTestExamples = 100;
constexpr size_t kEpochs = 2;

class FirstExamples : public tandem::data::Dataset<FirstExamples> {
 public:
  FirstExamples(tandem::data::datasets::MNIST mnist, size_t count)
      : mnist_(std::move(mnist)), count_(count) {}
  tandem::data::Example<> get(size_t index) override { return mnist_.get(index); }
  std::optional<size_t> size() const override { return count_; }

 private:
  tandem::data::datasets::MNIST mnist_;
  size_t count_;
};

// ---- from dist-mnist.cpp ----

// Define a Convolutional Module
struct Model : tandem::nn::Module {
  Model()
      : conv1(tandem::nn::Conv2dOptions(1, 10, 5)),
        conv2(tandem::nn::Conv2dOptions(10, 20, 5)),
        fc1(320, 50),
        fc2(50, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("conv2_drop", conv2_drop);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  tandem::Tensor forward(tandem::Tensor x) {
    x = tandem::relu(tandem::max_pool2d(conv1->forward(x), 2));
    x = tandem::relu(tandem::max_pool2d(conv2_drop->forward(conv2->forward(x)), 2));
    x = x.view({-1, 320});
    x = tandem::relu(fc1->forward(x));
    x = tandem::dropout(x, 0.5, is_training());
    x = fc2->forward(x);
    return tandem::log_softmax(x, 1);
  }

  tandem::nn::Conv2d conv1;
  tandem::nn::Conv2d conv2;
  tandem::nn::Dropout2d conv2_drop;
  tandem::nn::Linear fc1;
  tandem::nn::Linear fc2;
};

void waitWork(std::shared_ptr<tandem::c10d::ProcessGroupMPI> pg,
              std::vector<std::shared_ptr<tandem::c10d::ProcessGroup::Work>> works) {
  for (auto& work : works) {
    try {
      work->wait();
    } catch (const std::exception& ex) {
      std::cerr << "Exception received: " << ex.what() << std::endl;
      pg->abort();
    }
  }
}

// port: main() returns the trained model, for the checks below.
std::shared_ptr<Model> dist_mnist_main() {
  // Creating MPI Process Group
  auto pg = tandem::c10d::ProcessGroupMPI::createProcessGroupMPI();

  // Retrieving MPI environment variables
  auto numranks = pg->getSize();
  auto rank = pg->getRank();

  // TRAINING
  // Read train dataset
  const char* kDataRoot = tandem::data::datasets::kFashionMNISTRoot;  // port: "../data"
  auto train_dataset =
      FirstExamples(tandem::data::datasets::MNIST(kDataRoot), kTrainExamples)  // port
          .map(tandem::data::transforms::Normalize<>(0.1307, 0.3081))
          .map(tandem::data::transforms::Stack<>());

  // Distributed Random Sampler
  auto data_sampler = tandem::data::samplers::DistributedRandomSampler(
      train_dataset.size().value(), numranks, rank, false);

  auto num_train_samples_per_proc = train_dataset.size().value() / numranks;

  // Generate dataloader
  auto total_batch_size = 64;
  auto batch_size_per_proc =
      total_batch_size / numranks;  // effective batch size in each processor
  auto data_loader = tandem::data::make_data_loader(
      std::move(train_dataset), data_sampler, batch_size_per_proc);

  // setting manual seed
  tandem::manual_seed(0);

  auto model = std::make_shared<Model>();

  auto learning_rate = 1e-2;

  tandem::optim::SGD optimizer(model->parameters(), learning_rate);

  // Number of epochs
  size_t num_epochs = kEpochs;  // port: 10

  for (size_t epoch = 1; epoch <= num_epochs; ++epoch) {
    size_t num_correct = 0;

    for (auto& batch : *data_loader) {
      auto ip = batch.data;
      auto op = batch.target.squeeze();

      // convert to required formats
      ip = ip.to(tandem::kF32);
      op = op.to(tandem::kLong);

      // Reset gradients
      model->zero_grad();

      // Execute forward pass
      auto prediction = model->forward(ip);

      auto loss = tandem::nll_loss(tandem::log_softmax(prediction, 1), op);

      // Backpropagation
      loss.backward();

      // Averaging the gradients of the parameters in all the processors
      // Note: This may lag behind DistributedDataParallel (DDP) in performance
      // since this synchronizes parameters after backward pass while DDP
      // overlaps synchronizing parameters and computing gradients in backward
      // pass
      std::vector<std::shared_ptr<::tandem::c10d::ProcessGroup::Work>> works;
      for (auto& param : model->named_parameters()) {
        std::vector<tandem::Tensor> tmp = {param.value().grad()};
        auto work = pg->allreduce(tmp);
        works.push_back(std::move(work));
      }

      waitWork(pg, works);

      // port: the example divides right after starting each allreduce, so
      // the division races with the collective still reading and writing
      // the gradient (c10d's Work forbids touching it before wait, as
      // tandem's does); divided after the wait, it is the average.
      for (auto& param : model->named_parameters()) {
        param.value().grad().data() = param.value().grad().data() / numranks;
      }

      // Update parameters
      optimizer.step();

      auto guess = prediction.argmax(1);
      num_correct += tandem::sum(guess.eq_(op)).item<int64_t>();
    }  // end batch loader

    auto accuracy = 100.0 * num_correct / num_train_samples_per_proc;

    std::cout << "Accuracy in rank " << rank << " in epoch " << epoch << " - " << accuracy
              << std::endl;

  }  // end epoch

  // TESTING ONLY IN RANK 0
  if (rank == 0) {
    auto test_dataset =
        FirstExamples(tandem::data::datasets::MNIST(
                          kDataRoot, tandem::data::datasets::MNIST::Mode::kTest),
                      kTestExamples)  // port
            .map(tandem::data::transforms::Normalize<>(0.1307, 0.3081))
            .map(tandem::data::transforms::Stack<>());

    auto num_test_samples = test_dataset.size().value();
    auto test_loader =
        tandem::data::make_data_loader(std::move(test_dataset), num_test_samples);

    model->eval();  // enable eval mode to prevent backprop

    size_t num_correct = 0;

    for (auto& batch : *test_loader) {
      auto ip = batch.data;
      auto op = batch.target.squeeze();

      // convert to required format
      ip = ip.to(tandem::kF32);
      op = op.to(tandem::kLong);

      auto prediction = model->forward(ip);

      auto loss = tandem::nll_loss(tandem::log_softmax(prediction, 1), op);

      std::cout << "Test loss - " << loss.item<float>() << std::endl;

      auto guess = prediction.argmax(1);

      num_correct += tandem::sum(guess.eq_(op)).item<int64_t>();

    }  // end test loader

    std::cout << "Num correct - " << num_correct << std::endl;
    std::cout << "Test Accuracy - " << 100.0 * num_correct / num_test_samples
              << std::endl;
  }  // end rank 0
  return model;
}

// ---- the reference: one process, each step over every rank's batch ----

// What dist_mnist_main computes, in one process: the same model from the
// same seed, and at each step the gradient of every rank's batch (with the
// dropout masks that rank draws: every rank draws from the same stream,
// seeded alike, for batches of one shape), summed, divided by the number of
// ranks. The ranks' batches are their samplers' blocks of epoch 0 in every
// epoch, as the example never calls set_epoch.
std::shared_ptr<Model> one_process_over_every_ranks_batches(int numranks) {
  auto dataset =
      FirstExamples(
          tandem::data::datasets::MNIST(tandem::data::datasets::kFashionMNISTRoot),
          kTrainExamples)
          .map(tandem::data::transforms::Normalize<>(0.1307, 0.3081))
          .map(tandem::data::transforms::Stack<>());
  const auto ranks = static_cast<size_t>(numranks);
  const size_t batch_size = 64 / ranks;
  std::vector<std::vector<size_t>> orders;
  for (size_t rank = 0; rank < ranks; ++rank) {
    orders.push_back(tandem::data::samplers::DistributedRandomSampler(
                         kTrainExamples, ranks, rank, false)
                         .indices(0));
  }
  tandem::manual_seed(0);
  auto model = std::make_shared<Model>();
  tandem::optim::SGD optimizer(model->parameters(), 1e-2);
  for (size_t epoch = 0; epoch < kEpochs; ++epoch) {
    for (size_t start = 0; start < orders[0].size(); start += batch_size) {
      model->zero_grad();
      const std::string stream = tandem::default_generator().get_state();
      for (const auto& order : orders) {
        tandem::default_generator().set_state(stream);
        const size_t end = std::min(start + batch_size, order.size());
        auto batch =
            dataset.get_batch(std::span<const size_t>(order).subspan(start, end - start));
        auto prediction = model->forward(batch.data);
        tandem::nll_loss(tandem::log_softmax(prediction, 1), batch.target.squeeze())
            .backward();  // accumulates: the sum over the ranks
      }
      for (auto& param : model->parameters()) param.grad().div_(numranks);
      optimizer.step();
    }
  }
  return model;
}

bool fashion_mnist_installed() {
  return std::filesystem::exists(
      std::filesystem::path(tandem::data::datasets::kFashionMNISTRoot) /
      "train-images-idx3-ubyte.gz");
}

TEST(LibTorchPortDistMnist, EveryRankEndsWithTheWeightsOfOneProcessOverAllBatches) {
  if (!fashion_mnist_installed()) {
    GTEST_SKIP() << "Fashion-MNIST is not installed in "
                 << tandem::data::datasets::kFashionMNISTRoot
                 << " (apt-get install dataset-fashion-mnist)";
  }
  auto trained = dist_mnist_main();
  auto pg = tandem::distributed::testing::world();
  auto reference = one_process_over_every_ranks_batches(pg->size());
  auto reference_weights = reference->named_parameters();
  for (auto& param : trained->named_parameters()) {
    SCOPED_TRACE(param.key());
    const tandem::Tensor mine = param.value().detach();
    // The same bits on every rank: one allreduce result, one update.
    EXPECT_TRUE(tandem::equal(tandem::distributed::testing::root_copy(pg, mine), mine));
    // One process over every rank's batches: a sum of two gradients has
    // one rounding either way; of three, MPI may add in another order.
    const tandem::Tensor want = reference_weights[param.key()].detach();
    const double max_difference = (mine - want).abs().max().item<double>();
    if (pg->size() <= 2) {
      EXPECT_EQ(max_difference, 0.0);
    } else {
      EXPECT_LE(max_difference, 1e-6);
    }
  }
  // It learns: the weights moved from their seeded start.
  tandem::manual_seed(0);
  Model untrained;
  EXPECT_FALSE(tandem::equal(untrained.fc2->weight, trained->fc2->weight));
}

}  // namespace
