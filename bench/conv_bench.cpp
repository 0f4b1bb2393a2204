// conv2d forward, and forward + backward, on the two convolutions of a
// Fashion-MNIST CNN at batch 64: 1 -> 32 channels on 28x28 (the input layer,
// whose input needs no gradient) and 32 -> 64 on 14x14 after pooling (a
// hidden layer, whose input does), kernel 3, padding 1, on 1 and 2 threads.
// Then the other layers of `tandem train --model cnn` on its first block's
// output at batch 256 ([256, 32, 28, 28]), forward + backward on one thread:
// max_pool2d(2) and batch_norm in training mode.
// To compare with PyTorch, time the same calls in Python: under
// torch.set_num_threads(1 or 2), F.conv2d(x, w, b, 1, 1) in no_grad for the
// forward, and F.conv2d(x, w, b, 1, 1).backward(g) with x.requires_grad as
// here for forward + backward.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

using tandem::Tensor;

struct ConvCase {
  Tensor x, w, b, grad_out;
};

// Args: in_channels, out_channels, image size (threads: the fourth arg).
ConvCase make_case(const benchmark::State& state, bool input_grad) {
  const int64_t in = state.range(0), out = state.range(1), size = state.range(2);
  ConvCase c{tandem::randn({64, in, size, size}),
             tandem::randn({out, in, 3, 3}).requires_grad_(),
             tandem::randn({out}).requires_grad_(),
             tandem::randn({64, out, size, size})};
  c.x.requires_grad_(input_grad);
  return c;
}

void set_flops(benchmark::State& state, double passes) {
  const double macs =
      64.0 * state.range(0) * state.range(1) * 9 * state.range(2) * state.range(2);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2 * macs * passes * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1000);
}

void BM_Conv2dForward(benchmark::State& state) {
  tandem::NoGradGuard no_grad;
  ThreadBudget threads(state.range(3));
  ConvCase c = make_case(state, false);
  for (auto _ : state) benchmark::DoNotOptimize(tandem::conv2d(c.x, c.w, c.b, 1, 1));
  set_flops(state, 1);
}

void BM_Conv2dForwardBackward(benchmark::State& state) {
  // The input layer (1 channel) needs no input gradient, as in training.
  const bool input_grad = state.range(0) > 1;
  ThreadBudget threads(state.range(3));
  ConvCase c = make_case(state, input_grad);
  for (auto _ : state) {
    c.w.mutable_grad() = Tensor();
    c.b.mutable_grad() = Tensor();
    c.x.mutable_grad() = Tensor();
    tandem::conv2d(c.x, c.w, c.b, 1, 1).backward(c.grad_out);
  }
  set_flops(state, input_grad ? 3 : 2);
}

void conv_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    b->Args({1, 32, 28, threads});
    b->Args({32, 64, 14, threads});
  }
  // Wall time: with 2 threads the main thread's CPU time is half the story.
  b->ArgNames({"in", "out", "hw", "threads"})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
}

// The CNN's first block output, [256, 32, 28, 28], needing a gradient.
Tensor block_output() { return tandem::randn({256, 32, 28, 28}).requires_grad_(); }

void BM_MaxPool2dForwardBackward(benchmark::State& state) {
  ThreadBudget threads(1);
  Tensor x = block_output();
  const Tensor grad_out = tandem::randn({256, 32, 14, 14});
  for (auto _ : state) {
    x.mutable_grad() = Tensor();
    tandem::max_pool2d(x, 2).backward(grad_out);
  }
}

void BM_BatchNorm2dForwardBackward(benchmark::State& state) {
  ThreadBudget threads(1);
  Tensor x = block_output();
  Tensor weight = tandem::ones({32}).requires_grad_();
  Tensor bias = tandem::zeros({32}).requires_grad_();
  Tensor running_mean = tandem::zeros({32});
  Tensor running_var = tandem::ones({32});
  const Tensor grad_out = tandem::randn({256, 32, 28, 28});
  for (auto _ : state) {
    x.mutable_grad() = weight.mutable_grad() = bias.mutable_grad() = Tensor();
    tandem::batch_norm(x, running_mean, running_var, weight, bias, true, 0.1, 1e-5)
        .backward(grad_out);
  }
}

BENCHMARK(BM_Conv2dForward)->Apply(conv_shapes);
BENCHMARK(BM_Conv2dForwardBackward)->Apply(conv_shapes);
BENCHMARK(BM_MaxPool2dForwardBackward)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BatchNorm2dForwardBackward)->Unit(benchmark::kMillisecond);

}  // namespace
