// The memory-bound kernels of an MLP training step at its sizes (batch 256,
// 1024 hidden units, 10 or 1000 classes), each on 1 and 2 threads: the
// elementwise loop, a bias gradient's column sum, a sum to a scalar, a
// copy, a batch's index_select, log_softmax and cross-entropy rows, and the
// fused SGD and Adam steps. They show whether splitting a kernel across
// threads pays for waking them (times are wall-clock; on a shared machine
// run them alone, e.g. under `chrt -f 10`, or the other core is not free).
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;

void per_thread_count(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMicrosecond);
}

void per_classes_and_thread_count(benchmark::internal::Benchmark* b) {
  b->ArgNames({"classes", "threads"})
      ->ArgsProduct({{10, 1000}, {1, 2}})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}

void BM_AddThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor a = tandem::randn({256, 1024}), b = tandem::randn({256, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(BM_AddThreads)->Apply(per_thread_count);

// An add around the grain of Note [Intra-op grain] (src/backend/cpu/loops.h):
// where two threads start to beat one.
void BM_AddSizeThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(1));
  Tensor a = tandem::randn({state.range(0)}), b = tandem::randn({state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(a + b);
}
BENCHMARK(BM_AddSizeThreads)
    ->ArgNames({"n", "threads"})
    ->ArgsProduct({{1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 19, 1 << 20}, {1, 2}})
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_ReluThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor x = tandem::randn({256, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(tandem::relu(x));
}
BENCHMARK(BM_ReluThreads)->Apply(per_thread_count);

// The gradient of relu alone (one ReluBackward node), through the engine.
void BM_ReluBackwardThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor x = tandem::randn({256, 1024}).requires_grad_();
  Tensor y = tandem::relu(x), g = tandem::randn({256, 1024});
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        tandem::autograd::grad({y}, {x}, {g}, /*retain_graph=*/true));
  }
}
BENCHMARK(BM_ReluBackwardThreads)->Apply(per_thread_count);

// A Linear layer's bias gradient.
void BM_SumDim0Threads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor x = tandem::randn({256, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(x.sum(0));
}
BENCHMARK(BM_SumDim0Threads)->Apply(per_thread_count);

// A sum to a scalar over the MLP's largest weight: chunks on threads.
void BM_SumAllThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor x = tandem::randn({1024 * 1024});
  for (auto _ : state) benchmark::DoNotOptimize(x.sum());
}
BENCHMARK(BM_SumAllThreads)->Apply(per_thread_count);

// A contiguous copy of the MLP's largest weight, as replicate makes it.
void BM_CloneThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor x = tandem::randn({1024, 1024});
  for (auto _ : state) benchmark::DoNotOptimize(x.clone());
}
BENCHMARK(BM_CloneThreads)->Apply(per_thread_count);

// A batch of 256 MNIST-sized rows picked from a dataset.
void BM_IndexSelectThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  Tensor data = tandem::randn({60000, 784});
  Tensor rows = tandem::randint(60000, {256});
  for (auto _ : state) benchmark::DoNotOptimize(data.index_select(0, rows));
}
BENCHMARK(BM_IndexSelectThreads)->Apply(per_thread_count);

void BM_LogSoftmaxThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(1));
  Tensor x = tandem::randn({256, state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(tandem::log_softmax(x, 1));
}
BENCHMARK(BM_LogSoftmaxThreads)->Apply(per_classes_and_thread_count);

// The loss of a training step: forward and the gradient of the logits.
void BM_CrossEntropyThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(1));
  Tensor logits = tandem::randn({256, state.range(0)}).requires_grad_();
  Tensor target = tandem::randint(state.range(0), {256});
  for (auto _ : state) {
    Tensor loss = tandem::cross_entropy(logits, target);
    benchmark::DoNotOptimize(tandem::autograd::grad({loss}, {logits}));
  }
}
BENCHMARK(BM_CrossEntropyThreads)->Apply(per_classes_and_thread_count);

// SGD with momentum (as `tandem train` runs it) over the 784-1024-1024-10
// MLP's 1.86M parameters, gradients already in place.
void BM_SgdStepMlpThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  tandem::nn::Sequential model(tandem::nn::Linear(784, 1024),
                               tandem::nn::Linear(1024, 1024),
                               tandem::nn::Linear(1024, 10));
  for (Tensor& p : model->parameters()) p.mutable_grad() = tandem::randn(p.sizes());
  tandem::optim::SGD opt(model->parameters(),
                         tandem::optim::SGDOptions(1e-6).momentum(0.9));
  opt.step();  // creates the momentum buffers
  for (auto _ : state) opt.step();
}
BENCHMARK(BM_SgdStepMlpThreads)->Apply(per_thread_count);

void BM_AdamStepMlpThreads(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  tandem::nn::Sequential model(tandem::nn::Linear(784, 1024),
                               tandem::nn::Linear(1024, 1024),
                               tandem::nn::Linear(1024, 10));
  for (Tensor& p : model->parameters()) p.mutable_grad() = tandem::randn(p.sizes());
  tandem::optim::Adam opt(model->parameters(), tandem::optim::AdamOptions(1e-6));
  opt.step();  // creates the moments
  for (auto _ : state) opt.step();
}
BENCHMARK(BM_AdamStepMlpThreads)->Apply(per_thread_count);

}  // namespace
