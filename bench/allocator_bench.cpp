// The CPU allocator, caching against the system mode (aligned_alloc/free):
// allocate + free of one size (what a cache hit costs), the same with the
// block written in between (where fresh pages cost their page faults), and
// allocate + free from two threads at once (the shared lock). The second
// argument is 1 for caching, 0 for the system.
#include <benchmark/benchmark.h>

#include <cstring>
#include <optional>

#include "tandem/core/allocator.h"

namespace {

// Sets the mode for one benchmark and restores it after.
class Mode {
 public:
  explicit Mode(bool caching) : saved_(tandem::cpu_allocator_caching()) {
    tandem::set_cpu_allocator_caching(caching);
  }
  ~Mode() { tandem::set_cpu_allocator_caching(saved_); }
  Mode(const Mode&) = delete;
  Mode& operator=(const Mode&) = delete;

 private:
  bool saved_;
};

void sizes_and_modes(benchmark::internal::Benchmark* b) {
  for (int64_t bytes :
       {int64_t{4} << 20, int64_t{1} << 20, int64_t{4} << 10, int64_t{64}})
    for (int64_t caching : {1, 0}) b->Args({bytes, caching});
}

void BM_AllocateFree(benchmark::State& state) {
  // Threads share one mode: thread 0 sets it before the loop's start
  // barrier and restores it after the end one.
  static std::optional<Mode> mode;
  if (state.thread_index() == 0) mode.emplace(state.range(1) != 0);
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    tandem::DataPtr p = tandem::cpu_allocator().allocate(bytes);
    benchmark::DoNotOptimize(p.get());
  }
  if (state.thread_index() == 0) mode.reset();
}
BENCHMARK(BM_AllocateFree)->Apply(sizes_and_modes);
BENCHMARK(BM_AllocateFree)->Args({1 << 20, 1})->Args({1 << 20, 0})->Threads(2);
BENCHMARK(BM_AllocateFree)->Args({4 << 10, 1})->Args({4 << 10, 0})->Threads(2);

// A tensor is written after it is allocated: in the system mode a large
// block may be fresh pages the kernel maps and zeroes on first touch.
void BM_AllocateFillFree(benchmark::State& state) {
  Mode mode(state.range(1) != 0);
  const auto bytes = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    tandem::DataPtr p = tandem::cpu_allocator().allocate(bytes);
    std::memset(p.get(), 1, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AllocateFillFree)->Apply(sizes_and_modes);

// The shapes of one MLP training step (784-1024-1024-10, batch 256) live
// at once, then freed: what the allocator sees each step, minus the math.
void BM_AllocatorMlpShapes(benchmark::State& state) {
  Mode mode(state.range(0) != 0);
  const size_t f = sizeof(float);
  const size_t shapes[] = {f * 256 * 1024,
                           f * 256 * 1024,
                           f * 256 * 1024,
                           f * 256 * 1024,
                           f * 256 * 10,
                           f * 256 * 10,
                           f * 784 * 1024,
                           f * 1024 * 1024,
                           f * 10 * 1024,
                           1024 * f,
                           1024 * f,
                           10 * f,
                           f * 256 * 1024,
                           f * 256 * 1024,
                           f * 256 * 784,
                           f};
  for (auto _ : state) {
    tandem::DataPtr live[std::size(shapes)];
    for (size_t i = 0; i < std::size(shapes); ++i) {
      live[i] = tandem::cpu_allocator().allocate(shapes[i]);
      std::memset(live[i].get(), 0, shapes[i]);
    }
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_AllocatorMlpShapes)->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

}  // namespace
