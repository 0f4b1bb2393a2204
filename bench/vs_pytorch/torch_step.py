#!/usr/bin/python3
"""PyTorch's side of `tandem bench`: whole training steps on synthetic data.

A step is zero_grad (set_to_none), forward, loss, backward and SGD(lr=0.01,
no momentum).step(), timed one by one with time.perf_counter after --warmup
untimed steps. Models, data and flags are `tandem bench`'s:
  tiny  Linear(5, 2), MSE against randn targets, batch 30
  mlp   Flatten, Linear(784,1024)-ReLU-Linear(1024,1024)-ReLU-Linear(1024,10),
        cross-entropy against random labels, batch 256, input [N, 1, 28, 28]
  cnn   Conv2d(1,32,3,p=1)-BatchNorm2d-ReLU-MaxPool2d(2), Conv2d(32,64,3,p=1)-
        BatchNorm2d-ReLU-MaxPool2d(2), Flatten, Linear(3136,128)-ReLU-
        Linear(128,10), cross-entropy, batch 256
and it prints the same one-line JSON object (median/min/max step ms,
samples/s at the median, peak RSS in MiB), plus the configuration, the BLAS
library that actually loaded and OpenBLAS's own thread count.

On a GPU (--device cuda:0; scripts/gpu-check.sh runs it so) the model and
data live there, each step ends with torch.cuda.synchronize() as `tandem
bench`'s does, TF32 is off for matrix products and convolutions (tandem's
default; PyTorch's for matmul, not for cuDNN), and peak GPU memory is
reported; no thread or BLAS configuration applies.

Threads: torch.set_num_threads(N) plus the BLAS environment of --config (see
torch_configs.py; the script re-executes itself under it). Run it with
Debian's python3, the one that sees python3-torch:

  bench/vs_pytorch/torch_step.py --model mlp --threads 2 --config openmp-blas
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_configs  # noqa: E402

DEFAULT_BATCH = {"tiny": 30, "mlp": 256, "cnn": 256}


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch training-step benchmark")
    parser.add_argument("--model", choices=sorted(DEFAULT_BATCH), default="mlp")
    parser.add_argument("--batch-size", type=int)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--config", default="pthread-blas", choices=sorted(torch_configs.CONFIGS))
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu", help="cpu, or cuda:N")
    parser.add_argument("--channels-last", action="store_true",
                        help="cnn: keep activations in NHWC (oneDNN's preferred layout)")
    args = parser.parse_args()
    if args.batch_size is None:
        args.batch_size = DEFAULT_BATCH[args.model]
    return args


def make_model(name, nn):
    if name == "tiny":
        return nn.Linear(5, 2)
    if name == "mlp":
        return nn.Sequential(
            nn.Flatten(),
            nn.Linear(784, 1024), nn.ReLU(),
            nn.Linear(1024, 1024), nn.ReLU(),
            nn.Linear(1024, 10),
        )
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(64 * 7 * 7, 128), nn.ReLU(),
        nn.Linear(128, 10),
    )


def make_data(name, batch, torch):
    if name == "tiny":
        return torch.randn(batch, 5), torch.randn(batch, 2)
    return torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))


def summary(millis, batch):
    median = statistics.median(millis)
    return {
        "median_ms": round(median, 6),
        "min_ms": round(min(millis), 6),
        "max_ms": round(max(millis), 6),
        "samples_per_second": round(batch / median * 1000.0, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
    }


def main():
    args = parse_args()
    on_gpu = args.device.startswith("cuda")
    if not on_gpu:
        torch_configs.apply(args.config, args.threads)

    import torch
    import torch.nn.functional as F

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = make_model(args.model, torch.nn).to(args.device)
    inputs, targets = (t.to(args.device) for t in make_data(args.model, args.batch_size, torch))
    if on_gpu:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    if args.channels_last:
        model = model.to(memory_format=torch.channels_last)
        inputs = inputs.contiguous(memory_format=torch.channels_last)
    loss_fn = F.mse_loss if args.model == "tiny" else F.cross_entropy
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    millis = []
    for step in range(args.warmup + args.steps):
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(inputs), targets)
        loss.backward()
        optimizer.step()
        if on_gpu:
            torch.cuda.synchronize()
            if step + 1 == args.warmup:
                torch.cuda.reset_peak_memory_stats()
        took = (time.perf_counter() - start) * 1000.0
        if step >= args.warmup:
            millis.append(took)

    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "devices": args.device,
        "threads": torch.get_num_threads(),
        "steps": args.steps,
        "warmup": args.warmup,
    }
    result.update(summary(millis, args.batch_size))
    result["framework"] = f"pytorch {torch.__version__}"
    if on_gpu:
        result["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / (1 << 20), 1)
        result["gpu"] = torch.cuda.get_device_name()
    else:
        result["config"] = args.config + (" channels-last" if args.channels_last else "")
        result.update(torch_configs.loaded_blas())
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
