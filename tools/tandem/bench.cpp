// `tandem bench`: whole training steps on synthetic data, timed one by one,
// reported as one JSON object (median, min and max step milliseconds,
// samples per second at the median, peak RSS, and peak GPU memory when a
// GPU takes part). A step is what a training loop does: zero_grad, forward
// (DataParallel over several devices), loss, backward, SGD step; on GPUs the
// clock stops when their queued work is done. bench/vs_pytorch (and
// scripts/gpu-check.sh on a GPU) runs PyTorch's same steps beside it.
//
// Models: tiny is the seed tutorial's Linear(5, 2) with MSE (batch 30);
// mlp and cnn are `tandem train`'s models with cross-entropy (batch 256).
//
// Under mpirun each process runs DistributedDataParallel on one device
// with its share of the (global) batch; the processes meet at a barrier
// before the timed steps, process 0 reports, samples/s counts the global
// batch and peak_rss_mib is the processes' peaks summed (--overlap off
// reduces the gradients only after backward, to show what overlap gains).
//
// --profile FILE records the timed steps (or --profile-steps A-B) as a
// Chrome trace; its table goes to stderr, so stdout stays one JSON object.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include "balance_flag.h"
#include "commands.h"
#include "launched_group.h"
#include "model_on_devices.h"
#include "models.h"
#include "options.h"
#include "profile_flag.h"
#include "tandem/tandem.h"

namespace tandem::cli {
namespace {

struct Workload {
  nn::Sequential model;
  Tensor input;
  Tensor target;
  bool regression;  // MSE against target, else cross-entropy against labels
};

Workload make_workload(const std::string& name, int64_t batch) {
  if (name == "tiny") {
    nn::Sequential model(nn::Linear(5, 2));
    return {model, randn({batch, 5}), randn({batch, 2}), true};
  }
  return {make_model(name), randn({batch, 1, 28, 28}), randint(10, {batch}), false};
}

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB
}

struct BenchFlags {
  std::string model = "mlp";
  std::optional<int64_t> batch_size;
  std::string devices = "cpu:0";
  std::string balance = "even";
  InvariantFlags invariant;
  int64_t steps = 50;
  int64_t warmup = 5;
  uint64_t seed = 0;
  std::string overlap = "on";
  ProfileFlags profile;
};

int run_bench(const BenchFlags& flags) {
  const std::string& name = flags.model;
  const int64_t batch = flags.batch_size.value_or(name == "tiny" ? 30 : 256);
  const int64_t steps = flags.steps, warmup = flags.warmup;

  const auto group = launched_group();
  if (group && batch < group->size()) {
    throw UsageError(
        "bench: --batch-size is the global batch; it must be at least the "
        "number of processes");
  }
  manual_seed(flags.seed);
  Workload work = make_workload(name, batch);
  const std::vector<Device> devices = parse_device_list(flags.devices);
  // Under mpirun the shares are the processes' (as for train).
  Balancing balancing = parse_balance(
      flags.balance, group ? static_cast<size_t>(group->size()) : devices.size());
  balancing.micro_batch = parse_invariant(flags.invariant);
  ModelOnDevices model(
      work.model,
      devices,
      group,
      nn::DistributedDataParallelOptions().overlap(flags.overlap == "on"),
      balancing);
  // This process's rows of the global batch: under mpirun with shares,
  // auto or in invariant mode the plan's, asked for every step (auto moves
  // them), else a fixed part.
  const bool planned = group && (!balancing.even() || balancing.micro_batch > 0);
  Tensor input, target;
  const auto take_rows = [&] {
    const RowRange mine = planned ? part_of(model.cut(batch), group->rank())
                                  : rows_of_this_process(group.get(), batch);
    input = work.input.narrow(0, mine.begin, mine.length).to(model.devices().front());
    target = work.target.narrow(0, mine.begin, mine.length).to(model.output_device());
  };
  take_rows();
  optim::SGD optimizer(model.model()->parameters(), optim::SGDOptions(0.01));
  // Unless told which, the timed steps are profiled.
  StepRange profiled_steps = parse_step_range(flags.profile.steps);
  if (profiled_steps.every_step()) profiled_steps = {warmup + 1, warmup + steps};
  ProfiledRun profiled(flags.profile, group.get(), profiled_steps);

  const bool on_gpu = std::any_of(model.devices().begin(),
                                  model.devices().end(),
                                  [](const Device& d) { return d.is_cuda(); });
  std::vector<double> millis;
  for (int64_t step = 0; step < warmup + steps; ++step) {
    if (group && step == warmup) group->barrier().wait();
    profiled.before_step(step + 1);
    if (planned) take_rows();  // untimed, as the fixed part taken once
    const auto start = std::chrono::steady_clock::now();
    optimizer.zero_grad();
    const Tensor output = model.forward(input);
    const Tensor loss =
        work.regression ? mse_loss(output, target) : cross_entropy(output, target);
    loss.backward();
    optimizer.step();
    if (on_gpu) cuda::synchronize();
    if (on_gpu && step + 1 == warmup) {
      for (const Device& d : model.devices()) {
        if (d.is_cuda()) cuda::reset_peak_memory_stats(d.index());
      }
    }
    const std::chrono::duration<double, std::milli> took =
        std::chrono::steady_clock::now() - start;
    if (step >= warmup) millis.push_back(took.count());
  }
  profiled.finish(std::cerr, /*together=*/true);  // stdout holds the JSON alone
  std::sort(millis.begin(), millis.end());
  const size_t n = millis.size();
  const double median = n % 2 ? millis[n / 2] : (millis[n / 2 - 1] + millis[n / 2]) / 2;

  double peak_gpu_mib = 0;  // the largest of the GPUs' peaks
  for (const Device& d : model.devices()) {
    if (!d.is_cuda()) continue;
    peak_gpu_mib =
        std::max(peak_gpu_mib,
                 static_cast<double>(cuda::memory_stats(d.index()).peak_allocated_bytes) /
                     (1 << 20));
  }
  double peak_rss = peak_rss_mib();
  if (group) {
    Tensor rss = full({1}, peak_rss, kFloat64);
    group->allreduce(rss).wait();
    peak_rss = rss.item<double>();
    if (group->rank() != 0) return 0;
  }
  char json[900];
  std::snprintf(
      json,
      sizeof json,
      "{\"model\":\"%s\",\"batch_size\":%lld,\"devices\":\"%s\",\"threads\":%lld,"
      "\"steps\":%lld,\"warmup\":%lld,\"median_ms\":%.6g,\"min_ms\":%.6g,"
      "\"max_ms\":%.6g,\"samples_per_second\":%.1f,\"peak_rss_mib\":%.1f,"
      "\"peak_gpu_mib\":%.1f,\"processes\":%d,\"overlap\":%s,\"balance\":\"%s\","
      "\"shares\":\"%s\",\"micro_batch\":%lld}",
      name.c_str(),
      static_cast<long long>(batch),
      model.device_list().c_str(),
      static_cast<long long>(num_threads()),
      static_cast<long long>(steps),
      static_cast<long long>(warmup),
      median,
      millis.front(),
      millis.back(),
      static_cast<double>(batch) / median * 1000.0,
      peak_rss,
      peak_gpu_mib,
      group ? group->size() : 1,
      flags.overlap == "on" ? "true" : "false",
      flags.balance.c_str(),
      shares_text(model.shares()).c_str(),
      static_cast<long long>(balancing.micro_batch));
  std::cout << json << std::endl;
  return 0;
}

}  // namespace

Action bench_command(CLI::App& command) {
  auto flags = std::make_shared<BenchFlags>();
  std::vector<std::string> models = {"tiny"};
  models.insert(models.end(), model_names().begin(), model_names().end());
  command.add_option("--model", flags->model, "the model")
      ->check(one_of("model", models));
  command
      .add_option("--batch-size",
                  flags->batch_size,
                  "samples per step (default 30 for tiny, else 256)")
      ->check(whole_number(1));
  command
      .add_option("--devices",
                  flags->devices,
                  "devices, comma-separated (DataParallel over several)")
      ->check(device_list());
  add_balance_flag(command, flags->balance);
  add_invariant_flags(command, flags->invariant);
  command.add_option("--steps", flags->steps, "timed steps")->check(whole_number(1));
  command.add_option("--warmup", flags->warmup, "untimed steps first")
      ->check(whole_number(0));
  add_profile_flags(command, flags->profile);
  command.add_option("--seed", flags->seed, "seeds the weights and the synthetic data")
      ->check(whole_number(0));
  command
      .add_option("--overlap",
                  flags->overlap,
                  "under mpirun: on (reduce gradients while backward runs) or off")
      ->check(one_of("value", {"on", "off"}));
  return [flags] { return run_bench(*flags); };
}

}  // namespace tandem::cli
