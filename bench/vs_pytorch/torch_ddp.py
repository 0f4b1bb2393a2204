#!/usr/bin/python3
"""PyTorch DistributedDataParallel's side of tandem's DataParallel row.

Two processes on this machine (gloo over 127.0.0.1, a free port), one thread
each (torch.set_num_threads(1) and the 1-thread BLAS environment of --config,
see torch_configs.py), each training the same model on its half of the
global batch (default 256, so 128 per rank) of synthetic data: the step is
zero_grad, forward, loss, backward (DDP all-reduces the gradients), SGD
(lr=0.01).step(). After --warmup steps both ranks meet at a barrier, rank 0
times each of --steps steps with time.perf_counter (DDP's all-reduce keeps
the ranks in step), and they meet at a barrier again.

It prints `tandem bench`'s JSON object: median/min/max step ms, samples/s of
the global batch at the median, peak_rss_mib the two ranks' peaks summed
(peak_rss_mib_per_rank has each), plus the configuration and the BLAS that
loaded. Run it with Debian's python3:

  bench/vs_pytorch/torch_ddp.py --model mlp --batch-size 256 [--pin]
"""

import argparse
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_configs  # noqa: E402
import torch_step  # noqa: E402

WORLD_SIZE = 2


def parse_args():
    parser = argparse.ArgumentParser(description="PyTorch DDP (gloo, 2 processes) step benchmark")
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--batch-size", type=int, default=256, help="the global batch")
    parser.add_argument("--config", default="pthread-blas", choices=sorted(torch_configs.CONFIGS))
    parser.add_argument("--pin", action="store_true", help="pin rank r to core r")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)  # set by the launcher
    args = parser.parse_args()
    if args.batch_size % WORLD_SIZE:
        parser.error(f"--batch-size must be a multiple of {WORLD_SIZE}")
    return args


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(args):
    env = torch_configs.environment(args.config, 1)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), WORLD_SIZE=str(WORLD_SIZE))
    procs = [
        subprocess.Popen([sys.executable, os.path.abspath(__file__)] + sys.argv[1:] +
                         ["--rank", str(rank)], env=env, stdout=subprocess.PIPE, text=True)
        for rank in range(WORLD_SIZE)
    ]
    outputs = [proc.communicate()[0] for proc in procs]
    for rank, proc in enumerate(procs):
        if proc.returncode != 0:
            sys.exit(f"torch_ddp: rank {rank} failed with exit status {proc.returncode}")
    reports = [json.loads(out.strip().splitlines()[-1]) for out in outputs]
    result = reports[0]
    per_rank = [report["peak_rss_mib"] for report in reports]
    result["peak_rss_mib"] = round(sum(per_rank), 1)
    result["peak_rss_mib_per_rank"] = per_rank
    print(json.dumps(result), flush=True)


def rank_main(args):
    if args.pin:
        os.sched_setaffinity(0, {args.rank % os.cpu_count()})
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel

    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=args.rank, world_size=WORLD_SIZE)
    torch.manual_seed(args.seed)
    model = DistributedDataParallel(torch_step.make_model(args.model, torch.nn))
    torch.manual_seed(args.seed + 1 + args.rank)
    inputs, labels = torch_step.make_data(args.model, args.batch_size // WORLD_SIZE, torch)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

    def step():
        optimizer.zero_grad(set_to_none=True)
        F.cross_entropy(model(inputs), labels).backward()
        optimizer.step()

    for _ in range(args.warmup):
        step()
    dist.barrier()
    millis = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step()
        millis.append((time.perf_counter() - start) * 1000.0)
    dist.barrier()
    dist.destroy_process_group()

    median = statistics.median(millis)
    result = {
        "model": args.model,
        "batch_size": args.batch_size,
        "devices": f"ddp gloo {WORLD_SIZE} processes",
        "threads": torch.get_num_threads(),
        "steps": args.steps,
        "warmup": args.warmup,
        "median_ms": round(median, 6),
        "min_ms": round(min(millis), 6),
        "max_ms": round(max(millis), 6),
        "samples_per_second": round(args.batch_size / median * 1000.0, 1),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1),
        "framework": f"pytorch {torch.__version__}",
        "config": args.config + (" pinned" if args.pin else ""),
    }
    result.update(torch_configs.loaded_blas())
    print(json.dumps(result), flush=True)


def main():
    args = parse_args()
    if args.rank is None:
        launch(args)
    else:
        rank_main(args)


if __name__ == "__main__":
    main()
