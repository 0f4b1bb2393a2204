// DataParallel on logical CPU devices: the MLP 784-1024-1024-10 forward +
// backward at batch 256 over cpu:0,cpu:1 (one core each) against cpu:0
// alone with one core and with both, and the cost of one (cached)
// replicate call. The goal: two devices >= 1.8x one core.
//
// What bounds that ratio, measured here too (bench/data_parallel_scaling
// prints the ratios, at batch 256 or 512): BM_MlpLoneReplicas runs two
// models that never meet, each on half the batch, at once on cpu:0 and
// cpu:1 (no scatter, no gather, no gradient sum): no data-parallel run on
// these cores can beat it. BM_MlpProducts times only the eight matrix
// products of one forward + backward on one core, at one replica's batch
// and at the whole batch: when the products at half the batch cost more
// than half of those at the whole, the ratio stays below 2 before any
// communication.
#include <benchmark/benchmark.h>

#include <exception>
#include <vector>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;
namespace nn = tandem::nn;

nn::Sequential make_mlp() {
  tandem::manual_seed(0);
  return nn::Sequential(nn::Linear(784, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, 1024),
                        nn::ReLU(),
                        nn::Linear(1024, 10));
}

template <typename Forward>
void forward_backward(benchmark::State& state,
                      nn::Sequential& mlp,
                      int64_t batch,
                      Forward forward) {
  const Tensor x = tandem::randn({batch, 784}), y = tandem::randint(10, {batch});
  for (auto _ : state) {
    mlp->zero_grad();
    tandem::cross_entropy(forward(x), y).backward();
  }
  state.counters["samples/s"] = benchmark::Counter(
      static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}

// cpu:0 alone with a budget of state.range(0) cores, at batch state.range(1)
// (half a batch is one replica's share of the DataParallel batch).
void BM_MlpOneDevice(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  nn::Sequential mlp = make_mlp();
  forward_backward(
      state, mlp, state.range(1), [&](const Tensor& x) { return mlp->forward(x); });
}
BENCHMARK(BM_MlpOneDevice)
    ->Args({1, 256})
    ->Args({2, 256})
    ->Args({1, 128})
    ->Args({1, 512})
    ->Args({2, 512})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// DataParallel over cpu:0..cpu:(n-1), budget n cores (one each), at batch
// state.range(1).
void BM_MlpDataParallel(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  std::vector<tandem::Device> devices;
  for (int i = 0; i < state.range(0); ++i) devices.emplace_back(tandem::kCPU, i);
  nn::Sequential mlp = make_mlp();
  nn::DataParallel dp(mlp, nn::DataParallelOptions().device_ids(devices));
  forward_backward(
      state, mlp, state.range(1), [&](const Tensor& x) { return dp->forward(x); });
}
BENCHMARK(BM_MlpDataParallel)
    ->Args({2, 256})
    ->Args({2, 512})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Two models that never meet, one per device (cpu:0, cpu:1, one core each),
// each a forward + backward at batch state.range(0) in every iteration: the
// ceiling of BM_MlpDataParallel/2 at twice that batch. As DataParallel's
// replicas do, the two read the same weights (each keeps its own
// gradients), and each its own half of the batch.
void BM_MlpLoneReplicas(benchmark::State& state) {
  ThreadBudget threads(2);
  const std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
  std::vector<nn::Sequential> models = {make_mlp(), make_mlp()};
  {
    const tandem::NoGradGuard no_grad;
    const std::vector<Tensor> shared = models[0]->parameters();
    const std::vector<Tensor> own = models[1]->parameters();
    for (size_t p = 0; p < shared.size(); ++p) own[p].set_data(shared[p]);
  }
  const int64_t batch = state.range(0);
  const std::vector<Tensor> inputs = {tandem::randn({batch, 784}),
                                      tandem::randn({batch, 784})};
  const Tensor y = tandem::randint(10, {batch});
  for (auto _ : state) {
    const auto errors = tandem::run_on_devices(devices, [&](size_t i) {
      models[i]->zero_grad();
      tandem::cross_entropy(models[i]->forward(inputs[i]), y).backward();
    });
    for (const std::exception_ptr& error : errors) {
      if (error) std::rethrow_exception(error);
    }
  }
  state.counters["samples/s"] = benchmark::Counter(
      2.0 * static_cast<double>(batch * state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MlpLoneReplicas)
    ->Arg(128)
    ->Arg(256)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The MLP's eight products of one forward + backward (three forward, two
// input gradients, three weight gradients) on one core at batch
// state.range(0).
void BM_MlpProducts(benchmark::State& state) {
  ThreadBudget threads(1);
  const int64_t batch = state.range(0);
  const Tensor x = tandem::randn({batch, 784}), h = tandem::randn({batch, 1024}),
               w1 = tandem::randn({1024, 784}), w2 = tandem::randn({1024, 1024}),
               w3 = tandem::randn({10, 1024}), g3 = tandem::randn({batch, 10}),
               g2 = tandem::randn({batch, 1024});
  for (auto _ : state) {
    benchmark::DoNotOptimize(tandem::mm(x, w1.t()));
    benchmark::DoNotOptimize(tandem::mm(h, w2.t()));
    benchmark::DoNotOptimize(tandem::mm(h, w3.t()));
    benchmark::DoNotOptimize(tandem::mm(g3, w3));
    benchmark::DoNotOptimize(tandem::mm(g2, w2));
    benchmark::DoNotOptimize(tandem::mm(g3.t(), h));
    benchmark::DoNotOptimize(tandem::mm(g2.t(), h));
    benchmark::DoNotOptimize(tandem::mm(g2.t(), x));
  }
}
BENCHMARK(BM_MlpProducts)
    ->Arg(128)
    ->Arg(256)
    ->Arg(512)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One replicate call for the MLP over cpu:0,cpu:1 once the replicas exist.
void BM_ReplicateMlpCached(benchmark::State& state) {
  nn::Sequential mlp = make_mlp();
  std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
  tandem::parallel::ReplicaCache cache;
  tandem::parallel::replicate(mlp, devices, &cache);  // builds the replicas
  for (auto _ : state)
    benchmark::DoNotOptimize(tandem::parallel::replicate(mlp, devices, &cache));
}
BENCHMARK(BM_ReplicateMlpCached)->Unit(benchmark::kMicrosecond);

}  // namespace
