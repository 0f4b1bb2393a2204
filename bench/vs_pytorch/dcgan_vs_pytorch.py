#!/usr/bin/python3
"""A DCGAN generator's training step, tandem against PyTorch, at 1 and 2 threads.

The step is bench/conv_transpose_bench.cpp's BM_DcganGeneratorStep: zero_grad
(set_to_none), forward of the generator (four ConvTranspose2d layers, nz 100,
ngf 64, batch 64, one 32x32 output channel, BatchNorm2d + ReLU between, Tanh
at the end), MSE against a fixed target, backward. PyTorch runs the same
modules here. Like bench/vs_pytorch/run: PyTorch gets its fastest thread/BLAS
configuration of torch_configs.py (each candidate measured once), both get the
OpenBLAS kernels of OPENBLAS_CORETYPE when it is set, one-thread runs of both
are pinned to core 0, and the runs alternate, tandem then PyTorch, for
--rounds rounds; the table gives the median of the per-round medians.

  bench/vs_pytorch/dcgan_vs_pytorch.py --rounds 3
  bench/vs_pytorch/dcgan_vs_pytorch.py --bench build/bench/tandem_bench --threads 1
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import torch_configs  # noqa: E402

ONE_CORE = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def torch_step(args):
    """Runs in the configuration's environment: prints the median step in ms."""
    torch_configs.apply(args.config, args.threads)
    import torch
    from torch import nn
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)

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
    times = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        gen.zero_grad(set_to_none=True)
        nn.functional.mse_loss(gen(z), target).backward()
        if step >= args.warmup:
            times.append((time.perf_counter() - start) * 1e3)
    print(json.dumps({"median_ms": statistics.median(times)}))


def run_pytorch(args, config, threads):
    command = ([sys.executable, os.path.abspath(__file__), "--torch-worker", "--config",
                config, "--threads", str(threads), "--steps", str(args.steps), "--warmup",
                str(args.warmup)])
    if threads == 1:
        command = ONE_CORE + command
    done = subprocess.run(command, env=torch_configs.environment(config, threads),
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])["median_ms"]


def run_tandem(args, threads):
    command = [args.bench, f"--benchmark_filter=BM_DcganGeneratorStep/threads:{threads}/",
               f"--benchmark_repetitions={args.steps}", "--benchmark_min_time=0",
               "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    if threads == 1:
        command = ONE_CORE + command
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    for b in json.loads(done.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return b["real_time"]
    sys.exit("dcgan_vs_pytorch: no median in tandem_bench's report")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default=os.path.join(REPO, "build/bench/tandem_bench"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, action="append")
    parser.add_argument("--torch-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--config", default="pthread-blas", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_worker:
        args.threads = args.threads[0] if args.threads else 1
        return torch_step(args)
    if "OPENBLAS_CORETYPE" in os.environ:
        os.environ["TANDEM_BENCH_OPENBLAS_KERNELS"] = os.environ["OPENBLAS_CORETYPE"]
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '(unset)')}, "
          f"{args.rounds} rounds of {args.steps} steps")
    print("| DCGAN generator step, batch 64 | tandem ms | PyTorch ms | ratio |")
    print("|---|---|---|---|")
    for threads in args.threads or [1, 2]:
        probes = {c: run_pytorch(args, c, threads) for c in torch_configs.candidates(threads)}
        config = min(probes, key=probes.get)
        tandem, pytorch = [], []
        for _ in range(args.rounds):
            tandem.append(run_tandem(args, threads))
            pytorch.append(run_pytorch(args, config, threads))
        t, p = statistics.median(tandem), statistics.median(pytorch)
        print(f"| {threads} thread{'s' if threads > 1 else ''} (PyTorch: {config}) "
              f"| {t:.2f} | {p:.2f} | {t / p:.2f}x |", flush=True)


if __name__ == "__main__":
    main()
