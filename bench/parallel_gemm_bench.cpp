// How GEMMs share the cores: linear 256x784 -> 1024 forward with a core
// budget of 1 and 2 on one device, and on two devices at once (cpu:0 and
// cpu:1, one core each). GFLOP/s counts both devices' work.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;

constexpr double kFlop = 2.0 * 256 * 784 * 1024;

void set_rate(benchmark::State& state, double flop_per_iteration) {
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop_per_iteration * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}

// One device (the calling thread), budget state.range(0).
void BM_LinearOneDevice(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  const Tensor x = tandem::randn({256, 784}), w = tandem::randn({1024, 784}),
               b = tandem::randn({1024});
  for (auto _ : state) benchmark::DoNotOptimize(tandem::linear(x, w, b));
  set_rate(state, kFlop);
}
BENCHMARK(BM_LinearOneDevice)
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// state.range(0) devices at once, budget 2, each running the same forward.
void BM_LinearDevices(benchmark::State& state) {
  ThreadBudget threads(2);
  std::vector<tandem::Device> devices;
  for (int i = 0; i < state.range(0); ++i) devices.emplace_back(tandem::kCPU, i);
  const Tensor x = tandem::randn({256, 784}), w = tandem::randn({1024, 784}),
               b = tandem::randn({1024});
  constexpr int kReps = 10;  // per task, so the hand-off cost stays small
  for (auto _ : state) {
    tandem::run_on_devices(devices, [&](size_t) {
      for (int r = 0; r < kReps; ++r) benchmark::DoNotOptimize(tandem::linear(x, w, b));
    });
  }
  set_rate(state, kFlop * kReps * static_cast<double>(devices.size()));
}
BENCHMARK(BM_LinearDevices)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
