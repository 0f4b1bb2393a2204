#!/usr/bin/python3
"""Layer-heavy steps, tandem against PyTorch and LibTorch, at 1 and 2 threads.

The steps, the same on the three sides:
  lstm   bench/rnn_bench.cpp's BM_LstmWordLanguageModelStep: the word language
         model's LSTM (2 layers, 650 in and hidden, dropout 0.5, training
         mode) on seq 35, batch 20, input requiring grad; gradients of the
         parameters and the input reset to none, loss sum(out * g), backward
  dcgan  bench/conv_transpose_bench.cpp's BM_DcganGeneratorStep: zero_grad
         (set_to_none), the generator's forward (four ConvTranspose2d, nz 100,
         ngf 64, batch 64, one 32x32 output channel, BatchNorm2d + ReLU
         between, Tanh at the end), MSE against a fixed target, backward
tandem runs them in build/bench/tandem_bench, PyTorch in this script
(--torch-worker), LibTorch in libtorch_step.cpp (--model lstm|dcgan, built on
demand by libtorch_build.py; its column says why when it cannot run).

As in bench/vs_pytorch/run: for every step and thread count, each PyTorch
thread/BLAS configuration of torch_configs.py is measured once and the
fastest kept, and LibTorch runs under the same one; one-thread runs of every
framework are pinned to core 0; when OPENBLAS_CORETYPE is set, every
framework multiplies with those OpenBLAS kernels. Then the runs alternate,
tandem, PyTorch, LibTorch, for --rounds rounds, and the table gives the
median of the per-round medians and the ratios tandem / PyTorch (goal
<= 0.9x, issue 22) and tandem / LibTorch (for information: LibTorch runs
PyTorch's kernels without the interpreter, so this column shows how much of
the gap is Python).

What a run's median is: PyTorch and LibTorch time each of --steps steps after
--warmup untimed ones. tandem's are Google Benchmark repetitions, and every
repetition builds the model afresh: for dcgan, --steps repetitions of one step
each (--benchmark_min_time=0); for lstm, rnn_bench.cpp sets MinTime(3.0),
which Google Benchmark 1.7 lets win over --benchmark_min_time, so each of
LSTM_REPETITIONS repetitions reports the mean step of its last >= 3 s batch of
steps (about 7 s a repetition with the estimation runs).

  bench/vs_pytorch/layers_vs_pytorch.py --rounds 3
  bench/vs_pytorch/layers_vs_pytorch.py --model dcgan --threads 1 --steps 10
"""

import argparse
import collections
import datetime
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import libtorch_build  # noqa: E402
import torch_configs  # noqa: E402
import torch_step  # noqa: E402

LSTM_REPETITIONS = 3


def torch_lstm(torch):
    lstm = torch.nn.LSTM(650, 650, num_layers=2, dropout=0.5)
    x = torch.randn(35, 20, 650, requires_grad=True)
    g = torch.randn(35, 20, 650)

    def step():
        lstm.zero_grad(set_to_none=True)
        x.grad = None
        out, _ = lstm(x)
        (out * g).sum().backward()

    return step


def torch_dcgan(torch):
    nn = torch.nn

    def layer(cin, cout, stride, padding):
        return nn.ConvTranspose2d(cin, cout, 4, stride, padding, bias=False)

    ngf = 64
    gen = nn.Sequential(
        layer(100, ngf * 4, 1, 0), nn.BatchNorm2d(ngf * 4), nn.ReLU(),
        layer(ngf * 4, ngf * 2, 2, 1), nn.BatchNorm2d(ngf * 2), nn.ReLU(),
        layer(ngf * 2, ngf, 2, 1), nn.BatchNorm2d(ngf), nn.ReLU(),
        layer(ngf, 1, 2, 1), nn.Tanh())
    z = torch.randn(64, 100, 1, 1)
    target = torch.rand(64, 1, 32, 32) * 2 - 1

    def step():
        gen.zero_grad(set_to_none=True)
        nn.functional.mse_loss(gen(z), target).backward()

    return step


# run and probe are (steps, warmup) of a measured run and of a configuration
# probe; repetitions are tandem's (None: one step each, --steps of them).
Model = collections.namedtuple(
    "Model", "title batch benchmark torch_step run probe repetitions")
MODELS = {
    "lstm": Model("LSTM 2x650, seq 35, batch 20", 20, "BM_LstmWordLanguageModelStep",
                  torch_lstm, run=(8, 2), probe=(2, 1), repetitions=LSTM_REPETITIONS),
    "dcgan": Model("DCGAN generator, batch 64", 64, "BM_DcganGeneratorStep", torch_dcgan,
                   run=(15, 3), probe=(3, 1), repetitions=None),
}


def say(text):
    print(text, file=sys.stderr, flush=True)


def torch_worker(args):
    """Runs in the configuration's environment: prints the step's JSON report."""
    torch_configs.apply(args.config, args.threads)
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    model = MODELS[args.model]
    step = model.torch_step(torch)
    millis = []
    for i in range(args.warmup + args.steps):
        start = time.perf_counter()
        step()
        if i >= args.warmup:
            millis.append((time.perf_counter() - start) * 1e3)
    result = {"model": args.model, "batch_size": model.batch, "threads": torch.get_num_threads(),
              "steps": args.steps, "warmup": args.warmup}
    result.update(torch_step.summary(millis, model.batch))
    result.update(framework=f"pytorch {torch.__version__}", config=args.config)
    result.update(torch_configs.loaded_blas())
    print(json.dumps(result), flush=True)


def run_output(command, env, threads):
    """Runs a command (pinned to core 0 at one thread) and returns what it printed."""
    if threads == 1:
        command = torch_configs.ONE_CORE + command
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        sys.exit(f"layers_vs_pytorch: `{' '.join(command)}` failed with exit status "
                 f"{done.returncode}:\n{done.stderr[-2000:]}")
    return done.stdout


def run_reference(framework, opts, model, threads, config, steps_warmup):
    steps, warmup = steps_warmup
    common = ["--model", model, "--threads", str(threads), "--config", config,
              "--steps", str(steps), "--warmup", str(warmup)]
    if framework == "pytorch":
        command = [sys.executable, os.path.abspath(__file__), "--torch-worker"] + common
    else:
        command = [libtorch_build.binary(opts.build_dir)] + common
    output = run_output(command, torch_configs.environment(config, threads), threads)
    return json.loads(output.strip().splitlines()[-1])


def run_tandem(opts, model, threads, steps):
    benchmark, repetitions = MODELS[model].benchmark, MODELS[model].repetitions
    command = [opts.bench, f"--benchmark_filter=^{benchmark}/threads:{threads}/",
               f"--benchmark_repetitions={repetitions or steps}", "--benchmark_min_time=0",
               "--benchmark_format=json"]
    # tandem runs with every thread/BLAS variable cleared, as "default" does, and
    # with the user's OpenBLAS kernels when the references get them.
    env = torch_configs.environment("default", threads)
    if "TANDEM_BENCH_OPENBLAS_KERNELS" in os.environ:
        env["OPENBLAS_CORETYPE"] = os.environ["TANDEM_BENCH_OPENBLAS_KERNELS"]
    times = [b["real_time"] for b in json.loads(run_output(command, env, threads))["benchmarks"]
             if b.get("run_type") == "iteration" and b.get("time_unit") == "ms"]
    if not times:
        sys.exit(f"layers_vs_pytorch: `{' '.join(command)}` reported no step in ms")
    return {"median_ms": statistics.median(times)}


def choose_config(opts, model, threads):
    """The fastest PyTorch configuration for this step and thread count, each measured once."""
    probe = MODELS[model].probe
    times = {name: run_reference("pytorch", opts, model, threads, name, probe)["median_ms"]
             for name in torch_configs.candidates(threads)}
    best = min(times, key=times.get)
    say(f"probe PyTorch {model}, {threads} thread(s): "
        + ", ".join(f"{n} {t:.1f} ms" for n, t in times.items()) + f" -> {best}")
    return best


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default=os.path.join(REPO, "build/bench/tandem_bench"),
                        help="tandem's Google Benchmark binary (default build/bench/tandem_bench)")
    parser.add_argument("--model", choices=sorted(MODELS), action="append",
                        help="a step to compare (repeatable; default: all)")
    parser.add_argument("--threads", type=int, action="append",
                        help="a thread count (repeatable; default 1 and 2)")
    parser.add_argument("--rounds", type=int, default=3, help="alternations (default 3)")
    parser.add_argument("--steps", type=int, help="timed steps of a run (default per step)")
    parser.add_argument("--warmup", type=int, help="untimed steps first (default per step)")
    parser.add_argument("--build-dir", default=libtorch_build.DEFAULT_BUILD_DIR,
                        help="where libtorch_step is built (default build-vs-pytorch)")
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", default="pthread-blas", choices=sorted(torch_configs.CONFIGS),
                        help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.rounds < 1 or (opts.steps is not None and opts.steps < 1):
        parser.error("--rounds and --steps must be at least 1")
    if opts.threads and min(opts.threads) < 1:
        parser.error("--threads must be at least 1")
    return opts


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def commit():
    done = subprocess.run(["git", "-C", REPO, "describe", "--always", "--dirty"],
                          capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def compare(opts, model, threads, libtorch_skipped):
    """Alternates the frameworks for --rounds rounds; returns the table row."""
    steps, warmup = MODELS[model].run
    steps_warmup = (opts.steps or steps, opts.warmup if opts.warmup is not None else warmup)
    config = choose_config(opts, model, threads)
    medians = {"tandem": [], "pytorch": [], "libtorch": []}
    reports = {}
    for round_number in range(1, opts.rounds + 1):
        medians["tandem"].append(run_tandem(opts, model, threads, steps_warmup[0])["median_ms"])
        for framework in ["pytorch"] + ([] if libtorch_skipped else ["libtorch"]):
            reports[framework] = run_reference(framework, opts, model, threads, config,
                                               steps_warmup)
            medians[framework].append(reports[framework]["median_ms"])
        say(f"{model}, {threads} thread(s), round {round_number}/{opts.rounds}: "
            + ", ".join(f"{f} {m[-1]:.2f} ms" for f, m in medians.items() if m))
    for framework, report in reports.items():
        say(f"  {framework} ran with {report['config']}: blas {report['blas']}"
            + (f" {report['blas_parallel']}, {report['blas_threads']} thread(s), "
               f"{report['blas_kernels']} kernels" if "blas_kernels" in report else ""))
    t, p = statistics.median(medians["tandem"]), statistics.median(medians["pytorch"])
    row = [MODELS[model].title, str(threads), config, f"{t:.2f}", f"{p:.2f}", "-", f"{t / p:.2f}x",
           "yes" if t / p <= 0.9 else "no", "-"]
    if medians["libtorch"]:
        lt = statistics.median(medians["libtorch"])
        row[5], row[8] = f"{lt:.2f}", f"{t / lt:.2f}x"
    return row


HEADER = ["step", "threads", "PyTorch config", "tandem ms", "PyTorch ms", "LibTorch ms",
          "tandem/PyTorch", "met (<= 0.9x)", "tandem/LibTorch (info)"]


def main():
    opts = parse_args()
    if opts.torch_worker:
        opts.model = opts.model[0]
        opts.threads = opts.threads[0]
        return torch_worker(opts)
    if not os.access(opts.bench, os.X_OK):
        sys.exit(f"layers_vs_pytorch: no benchmark binary at {opts.bench}: build it "
                 "(cmake --build build --target tandem_bench) or pass --bench PATH")
    kernels = os.environ.get("OPENBLAS_CORETYPE")
    if kernels:
        os.environ["TANDEM_BENCH_OPENBLAS_KERNELS"] = kernels
    libtorch_skipped = libtorch_build.build(opts.build_dir, say)
    if libtorch_skipped:
        say(f"LibTorch runs skipped: {libtorch_skipped}")
    load_before, started = load_average(), time.monotonic()
    rows = [compare(opts, model, threads, libtorch_skipped)
            for model in opts.model or list(MODELS) for threads in opts.threads or [1, 2]]
    print(f"{datetime.date.today()}, commit {commit()}, {opts.rounds} round(s) in "
          f"{time.monotonic() - started:.0f} s; 1-minute load average {load_before} before, "
          f"{load_average()} after; OPENBLAS_CORETYPE={kernels or '(unset)'}; "
          f"medians of per-round medians")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "|".join("---" for _ in HEADER) + "|")
    for row in rows:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
