// Transposed convolutions as a DCGAN generator uses them, on 1 and 2
// threads: the generator's whole forward + backward step (nz 100, ngf 64,
// batch 64, one 32x32 output channel, as on padded Fashion-MNIST):
//   ConvTranspose2d(100, 256, 4, 1, 0) -> BatchNorm2d -> ReLU   [64, 256, 4, 4]
//   ConvTranspose2d(256, 128, 4, 2, 1) -> BatchNorm2d -> ReLU   [64, 128, 8, 8]
//   ConvTranspose2d(128, 64, 4, 2, 1)  -> BatchNorm2d -> ReLU   [64, 64, 16, 16]
//   ConvTranspose2d(64, 1, 4, 2, 1)    -> Tanh                  [64, 1, 32, 32]
// (no bias before batch norm, as in the DCGAN paper), MSE against a fixed
// target, then backward; and each ConvTranspose2d alone, forward + backward.
// bench/vs_pytorch/layers_vs_pytorch.py runs the same step in PyTorch and
// LibTorch and prints the ratios.
#include <benchmark/benchmark.h>

#include "tandem/tandem.h"
#include "thread_budget.h"

namespace {

namespace nn = tandem::nn;
using tandem::Tensor;

constexpr int64_t kBatch = 64, kNz = 100, kNgf = 64;

nn::ConvTranspose2dOptions layer(int64_t in,
                                 int64_t out,
                                 int64_t stride,
                                 int64_t padding) {
  return nn::ConvTranspose2dOptions(in, out, 4)
      .stride(stride)
      .padding(padding)
      .bias(false);
}

nn::Sequential dcgan_generator() {
  return nn::Sequential(nn::ConvTranspose2d(layer(kNz, kNgf * 4, 1, 0)),
                        nn::BatchNorm2d(kNgf * 4),
                        nn::ReLU(),
                        nn::ConvTranspose2d(layer(kNgf * 4, kNgf * 2, 2, 1)),
                        nn::BatchNorm2d(kNgf * 2),
                        nn::ReLU(),
                        nn::ConvTranspose2d(layer(kNgf * 2, kNgf, 2, 1)),
                        nn::BatchNorm2d(kNgf),
                        nn::ReLU(),
                        nn::ConvTranspose2d(layer(kNgf, 1, 2, 1)),
                        nn::Tanh());
}

void BM_DcganGeneratorStep(benchmark::State& state) {
  ThreadBudget threads(state.range(0));
  tandem::manual_seed(0);
  nn::Sequential gen = dcgan_generator();
  const Tensor z = tandem::randn({kBatch, kNz, 1, 1});
  const Tensor target = tandem::rand({kBatch, 1, 32, 32}) * 2 - 1;
  for (auto _ : state) {
    gen->zero_grad();
    tandem::mse_loss(gen->forward(z), target).backward();
  }
}

// Args: in, out, input size, stride, padding, threads.
void BM_ConvTranspose2dForwardBackward(benchmark::State& state) {
  ThreadBudget threads(state.range(5));
  const int64_t in = state.range(0), out = state.range(1), size = state.range(2);
  const int64_t stride = state.range(3), padding = state.range(4);
  Tensor x = tandem::randn({kBatch, in, size, size}).requires_grad_();
  Tensor w = tandem::randn({in, out, 4, 4}).requires_grad_();
  const int64_t out_size = (size - 1) * stride - 2 * padding + 4;
  const Tensor grad_out = tandem::randn({kBatch, out, out_size, out_size});
  for (auto _ : state) {
    x.mutable_grad() = w.mutable_grad() = Tensor();
    tandem::conv_transpose2d(x, w, {}, stride, padding).backward(grad_out);
  }
}

BENCHMARK(BM_DcganGeneratorStep)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_ConvTranspose2dForwardBackward)
    ->Apply([](benchmark::internal::Benchmark* b) {
      for (int64_t threads : {1, 2}) {
        b->Args({kNz, kNgf * 4, 1, 1, 0, threads});
        b->Args({kNgf * 4, kNgf * 2, 4, 2, 1, threads});
        b->Args({kNgf * 2, kNgf, 8, 2, 1, threads});
        b->Args({kNgf, 1, 16, 2, 1, threads});
      }
      b->ArgNames({"in", "out", "hw", "stride", "pad", "threads"})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    });

}  // namespace
