// DataParallel on logical CPU devices: the MLP 784-1024-1024-10 forward +
// backward at batch 256 over cpu:0,cpu:1 (one core each) against cpu:0
// alone with one core and with both, and the cost of one (cached)
// replicate call. The goal: two devices >= 1.8x one core.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"

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
// (128 is one replica's share of the DataParallel batch).
void BM_MlpOneDevice(benchmark::State& state) {
  tandem::set_num_threads(state.range(0));
  nn::Sequential mlp = make_mlp();
  forward_backward(
      state, mlp, state.range(1), [&](const Tensor& x) { return mlp->forward(x); });
  tandem::set_num_threads(static_cast<int64_t>(std::thread::hardware_concurrency()));
}
BENCHMARK(BM_MlpOneDevice)
    ->Args({1, 256})
    ->Args({2, 256})
    ->Args({1, 128})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// DataParallel over cpu:0..cpu:(n-1), budget n cores (one each).
void BM_MlpDataParallel(benchmark::State& state) {
  tandem::set_num_threads(state.range(0));
  std::vector<tandem::Device> devices;
  for (int i = 0; i < state.range(0); ++i) devices.emplace_back(tandem::kCPU, i);
  nn::Sequential mlp = make_mlp();
  nn::DataParallel dp(mlp, nn::DataParallelOptions().device_ids(devices));
  forward_backward(state, mlp, 256, [&](const Tensor& x) { return dp->forward(x); });
  tandem::set_num_threads(static_cast<int64_t>(std::thread::hardware_concurrency()));
}
BENCHMARK(BM_MlpDataParallel)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// One replicate call for the MLP over cpu:0,cpu:1 once the replicas exist.
void BM_ReplicateMlpCached(benchmark::State& state) {
  nn::Sequential mlp = make_mlp();
  std::vector<tandem::Device> devices = {"cpu:0", "cpu:1"};
  tandem::parallel::replicate(mlp, devices);  // builds and caches the replicas
  for (auto _ : state)
    benchmark::DoNotOptimize(tandem::parallel::replicate(mlp, devices));
}
BENCHMARK(BM_ReplicateMlpCached)->Unit(benchmark::kMicrosecond);

}  // namespace
