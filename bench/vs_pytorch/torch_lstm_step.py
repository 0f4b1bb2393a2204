#!/usr/bin/python3
"""PyTorch's side of bench/rnn_bench.cpp: the word language model's LSTM
(2 layers, 650 in and hidden, dropout 0.5) forward + backward on seq 35,
batch 20, input requiring grad, loss sum(out * g); prints the median,
min and max step in ms over --steps steps after --warmup.

Threads and BLAS as torch_step.py's (--config, torch_configs.py; the
kernels tandem uses come in TANDEM_BENCH_OPENBLAS_KERNELS):

  TANDEM_BENCH_OPENBLAS_KERNELS=Haswell /usr/bin/python3 \
      bench/vs_pytorch/torch_lstm_step.py --threads 2 --config openmp-blas
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_configs  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--config", default="pthread-blas", choices=sorted(torch_configs.CONFIGS))
    args = parser.parse_args()
    torch_configs.apply(args.config, args.threads)
    import torch

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(650, 650, num_layers=2, dropout=0.5)
    x = torch.randn(35, 20, 650, requires_grad=True)
    g = torch.randn(35, 20, 650)
    times, cpu_times = [], []
    for step in range(args.warmup + args.steps):
        start, cpu = time.perf_counter(), time.process_time()
        lstm.zero_grad(set_to_none=True)
        x.grad = None
        out, _ = lstm(x)
        (out * g).sum().backward()
        if step >= args.warmup:
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu) * 1e3)
    print(json.dumps({"threads": args.threads, "config": args.config, "median_ms": statistics.median(times),
                      "min_ms": min(times), "max_ms": max(times),
                      "median_cpu_ms": statistics.median(cpu_times)}))


if __name__ == "__main__":
    main()
