// Micro-benchmarks of the hot pieces on the CPU: elementwise, reductions,
// GEMM-bound linear (forward and backward), and whole training steps of the
// seed's tiny model and of the MLP the later benchmarks use.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"

namespace {

using tandem::Tensor;

void BM_AddContiguous(benchmark::State& state) {
  Tensor a = tandem::randn({state.range(0)}), b = tandem::randn({state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
  state.SetBytesProcessed(state.iterations() * state.range(0) * 3 * 4);
}
BENCHMARK(BM_AddContiguous)->Arg(1 << 10)->Arg(1 << 20);

void BM_AddBroadcastRow(benchmark::State& state) {
  Tensor a = tandem::randn({256, 1024}), bias = tandem::randn({1024});
  for (auto _ : state) benchmark::DoNotOptimize(a + bias);
}
BENCHMARK(BM_AddBroadcastRow);

void BM_SumDim0(benchmark::State& state) {
  Tensor a = tandem::randn({256, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(a.sum(0));
}
BENCHMARK(BM_SumDim0);

void BM_LinearForward(benchmark::State& state) {
  Tensor x = tandem::randn({256, 784}), w = tandem::randn({1024, 784}),
         b = tandem::randn({1024});
  for (auto _ : state) benchmark::DoNotOptimize(tandem::linear(x, w, b));
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * 256 * 784 * 1024 * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}
BENCHMARK(BM_LinearForward)->Unit(benchmark::kMillisecond);

// zero_grad, forward, loss, backward, optimizer step: one full step.
template <typename Model, typename Loss>
void train_steps(benchmark::State& state,
                 Model& model,
                 const Tensor& x,
                 const Tensor& y,
                 Loss loss_fn) {
  tandem::optim::SGD opt(model->parameters(), tandem::optim::SGDOptions(0.01));
  for (auto _ : state) {
    opt.zero_grad();
    Tensor loss = loss_fn(model->forward(x), y);
    loss.backward();
    opt.step();
  }
}

void BM_TinyStep(benchmark::State& state) {
  tandem::nn::Linear model(5, 2);
  Tensor x = tandem::randn({30, 5}), y = tandem::randn({30, 2});
  train_steps(state, model, x, y, [](const Tensor& out, const Tensor& t) {
    return tandem::mse_loss(out, t);
  });
}
BENCHMARK(BM_TinyStep)->Unit(benchmark::kMicrosecond);

void BM_MlpStep(benchmark::State& state) {
  tandem::nn::Sequential model(tandem::nn::Linear(784, 1024),
                               tandem::nn::ReLU(),
                               tandem::nn::Linear(1024, 1024),
                               tandem::nn::ReLU(),
                               tandem::nn::Linear(1024, 10));
  Tensor x = tandem::randn({256, 784}), y = tandem::randint(10, {256});
  train_steps(state, model, x, y, [](const Tensor& out, const Tensor& t) {
    return tandem::cross_entropy(out, t);
  });
}
BENCHMARK(BM_MlpStep)->Unit(benchmark::kMillisecond);

}  // namespace
