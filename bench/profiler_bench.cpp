// The profiler's cost (tandem/core/profiler.h). Off: one Span with no
// Session alive (BM_SpanOff). On: one Span recorded (BM_SpanOn). And the
// tutorial's tiny step (Linear 5->2, batch 30, DataParallel over cpu:0 and
// cpu:1, forward + backward) unprofiled (arg 0) and inside a Session (arg
// 1), with the spans it records per step as a counter: the off cost of a
// step is spans/step x BM_SpanOff over the arg-0 time.
#include <benchmark/benchmark.h>

#include <optional>

#include "tandem/core/profiler.h"
#include "tandem/tandem.h"

namespace {

namespace nn = tandem::nn;
namespace profiler = tandem::profiler;

void BM_SpanOff(benchmark::State& state) {
  const tandem::Device device("cpu:0");
  for (auto _ : state) {
    const profiler::Span span("user", "off", device);
    benchmark::DoNotOptimize(&span);
  }
}
BENCHMARK(BM_SpanOff);

void BM_SpanOn(benchmark::State& state) {
  const tandem::Device device("cpu:0");
  std::optional<profiler::Session> session(std::in_place);
  int64_t recorded = 0;
  for (auto _ : state) {
    {
      const profiler::Span span("user", "on", device);
      benchmark::DoNotOptimize(&span);
    }
    if (++recorded % (1 << 16) == 0) {  // keep memory bounded
      state.PauseTiming();
      session.reset();
      session.emplace();
      state.ResumeTiming();
    }
  }
}
BENCHMARK(BM_SpanOn);

void BM_TinyStepDataParallel(benchmark::State& state) {
  const bool profiled = state.range(0) == 1;
  tandem::manual_seed(0);
  nn::Linear model(5, 2);
  nn::DataParallel dp(model,
                      nn::DataParallelOptions().device_ids(
                          {tandem::Device("cpu:0"), tandem::Device("cpu:1")}));
  const tandem::Tensor x = tandem::randn({30, 5});
  std::optional<profiler::Session> session;
  if (profiled) session.emplace();
  for (auto _ : state) {
    dp(x).sum().backward();
    model->zero_grad();
  }
  if (session) {
    session->stop();
    state.counters["spans/step"] = static_cast<double>(session->events().size()) /
                                   static_cast<double>(state.iterations());
  }
}
BENCHMARK(BM_TinyStepDataParallel)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
