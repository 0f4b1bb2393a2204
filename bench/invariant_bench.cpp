// What invariant mode costs (issue 18; Note [Invariant mode] in
// src/parallel/micro_batches.cpp): one DataParallel training forward +
// backward over cpu:0,cpu:1 (one core each) at batch 256, normal against
// invariant with 32-row micro-batches, for the MLP 784-1024-1024-10 and
// `tandem train`'s CNN without its batch norms (28x28 Fashion-MNIST
// images). bench/invariant runs these interleaved and prints the ratios.
#include <benchmark/benchmark.h>

#include <vector>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;
namespace nn = tandem::nn;

nn::Sequential make_mlp() {
  return nn::Sequential(nn::Linear(784, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, 10));
}

nn::Sequential make_cnn() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 32, 3).padding(1)),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)),
                        nn::ReLU(),
                        nn::MaxPool2d(2),
                        nn::Flatten(),
                        nn::Linear(64 * 7 * 7, 128),
                        nn::ReLU(),
                        nn::Linear(128, 10));
}

// state.range(0): 0 the MLP, 1 the CNN; state.range(1): invariant mode;
// state.range(2): the micro-batch.
void BM_InvariantStep(benchmark::State& state) {
  ThreadBudget threads(2);
  tandem::manual_seed(0);
  const bool cnn = state.range(0) == 1;
  nn::Sequential model = cnn ? make_cnn() : make_mlp();
  nn::DataParallel dp(model,
                      nn::DataParallelOptions()
                          .device_ids({"cpu:0", "cpu:1"})
                          .invariant(state.range(1) == 1)
                          .micro_batch(state.range(2)));
  const int64_t batch = 256;
  const Tensor x = cnn ? tandem::randn({batch, 1, 28, 28}) : tandem::randn({batch, 784});
  const Tensor y = tandem::randint(10, {batch});
  const auto step = [&] {
    model->zero_grad();
    tandem::cross_entropy(dp->forward(x), y).backward();
  };
  // Untimed: the first steps build the replicas and grow the allocator's
  // pools (a first invariant step of the MLP takes ~250 ms), which a mean
  // over the few timed steps of a slow configuration would carry.
  for (int i = 0; i < 3; ++i) step();
  for (auto _ : state) step();
  state.counters["samples/s"] = benchmark::Counter(
      static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_InvariantStep)
    ->ArgNames({"cnn", "invariant", "micro"})
    ->Args({0, 0, 32})
    ->Args({0, 1, 32})
    ->Args({0, 1, 64})
    ->Args({1, 0, 32})
    ->Args({1, 1, 32})
    ->Args({1, 1, 64})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
