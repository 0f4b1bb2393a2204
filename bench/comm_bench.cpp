// The data-parallel plumbing on logical CPU devices, each piece alone:
// scatter of a batch and gather of the outputs over cpu:0,cpu:1, and the
// in-process gradient reduction (reduce_add_coalesced) and parameter
// broadcast (broadcast_coalesced) of the MLP 784-1024-1024-10's 7.1 MiB of
// float32 tensors; plus an embedding lookup and its backward.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;

const std::vector<tandem::Device> kTwoDevices = {"cpu:0", "cpu:1"};

// The MLP's parameter shapes, filled with noise.
std::vector<Tensor> mlp_sized_tensors() {
  return {tandem::randn({1024, 784}),
          tandem::randn({1024}),
          tandem::randn({1024, 1024}),
          tandem::randn({1024}),
          tandem::randn({10, 1024}),
          tandem::randn({10})};
}

void BM_ScatterBatch(benchmark::State& state) {
  const Tensor x = tandem::randn({256, 784});
  for (auto _ : state)
    benchmark::DoNotOptimize(tandem::parallel::scatter(x, kTwoDevices));
}
BENCHMARK(BM_ScatterBatch)->Unit(benchmark::kMicrosecond);

void BM_GatherOutputs(benchmark::State& state) {
  const std::vector<Tensor> outputs = {tandem::randn({128, 10}).to("cpu:0"),
                                       tandem::randn({128, 10}).to("cpu:1")};
  for (auto _ : state) {
    benchmark::DoNotOptimize(tandem::parallel::gather(outputs, tandem::Device("cpu:0")));
  }
}
BENCHMARK(BM_GatherOutputs)->Unit(benchmark::kMicrosecond);

// Sums two replicas' gradients into fresh memory on cpu:0 with a budget of
// state.range(0) cores.
void BM_ReduceAddMlpGradients(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  std::vector<Tensor> on_cpu1;
  for (const Tensor& t : mlp_sized_tensors()) on_cpu1.push_back(t.to("cpu:1"));
  const std::vector<std::vector<Tensor>> grads = {mlp_sized_tensors(), on_cpu1};
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        tandem::parallel::reduce_add_coalesced(grads, tandem::Device("cpu:0")));
  }
  state.SetBytesProcessed(state.iterations() * 3 * 1863690 * 4);  // 2 reads, 1 write
}
BENCHMARK(BM_ReduceAddMlpGradients)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_BroadcastMlpParameters(benchmark::State& state) {
  const std::vector<Tensor> params = mlp_sized_tensors();
  for (auto _ : state) {
    benchmark::DoNotOptimize(tandem::parallel::broadcast_coalesced(params, kTwoDevices));
  }
}
BENCHMARK(BM_BroadcastMlpParameters)->Unit(benchmark::kMicrosecond);

// A 50k x 256 table, 4096 lookups: forward, then forward + backward.
void BM_Embedding(benchmark::State& state) {
  const bool backward = state.range(0) != 0;
  Tensor weight = tandem::randn({50000, 256}).requires_grad_(backward);
  const Tensor ids = tandem::randint(50000, {32, 128});
  for (auto _ : state) {
    Tensor out = tandem::embedding(weight, ids);
    if (backward) {
      out.sum().backward();
      weight.mutable_grad() = Tensor();
    }
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_Embedding)
    ->ArgName("backward")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
