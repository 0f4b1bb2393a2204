// LSTM forward + backward on the word-level language model of PyTorch's
// examples (word_language_model, "medium": embedding 650, 2 layers of
// hidden 650, dropout 0.5, seq 35, batch 20), on 1 and 2 threads: the input
// needs a gradient (it comes from the embedding), the loss is sum(out * g).
// bench/vs_pytorch/layers_vs_pytorch.py times the same step in PyTorch and
// LibTorch and prints the ratios.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;

void BM_LstmWordLanguageModelStep(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  tandem::manual_seed(0);
  tandem::nn::LSTM lstm(tandem::nn::LSTMOptions(650, 650).num_layers(2).dropout(0.5));
  Tensor x = tandem::randn({35, 20, 650}).requires_grad_();
  const Tensor g = tandem::randn({35, 20, 650});
  for (auto _ : state) {
    for (Tensor& p : lstm->parameters()) p.mutable_grad() = Tensor();
    x.mutable_grad() = Tensor();
    auto [out, hidden] = lstm->forward(x);
    (out * g).sum().backward();
    benchmark::DoNotOptimize(x.grad());
  }
}

BENCHMARK(BM_LstmWordLanguageModelStep)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(3.0);

}  // namespace
