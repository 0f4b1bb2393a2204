"""Runs `tandem bench` as bench/vs_pytorch does and checks its one JSON
object: every field present and sane (min <= median <= max, samples/s
from the median), for each model and for DataParallel over two CPU
devices, evenly, by shares (--balance 3,1) and in invariant mode (its
micro_batch field); and that bad flags fail with exit 2 and a message.
Usage: check_bench.py PATH_TO_TANDEM"""
import json
import subprocess
import sys

FIELDS = {"model", "batch_size", "devices", "threads", "steps", "warmup", "median_ms",
          "min_ms", "max_ms", "samples_per_second", "peak_rss_mib", "peak_gpu_mib",
          "processes", "overlap", "balance", "shares", "micro_batch"}


def expect(condition, what="check failed"):
    """Fails the run with `what` unless `condition` holds: an explicit exit,
    which `python3 -O` keeps (it strips assert statements)."""
    if not condition:
        sys.exit(f"FAILED: {what}")


def bench(tandem, *flags):
    run = subprocess.run([tandem, *flags], capture_output=True, text=True, timeout=300)
    expect(run.returncode == 0, (flags, run.stderr))
    lines = run.stdout.splitlines()
    expect(len(lines) == 1, run.stdout)
    return json.loads(lines[0])


def check(result, model, batch, devices, threads, steps):
    expect(set(result) == FIELDS, result)
    expect((result["model"], result["batch_size"], result["devices"]) ==
           (model, batch, devices), result)
    expect((result["threads"], result["steps"]) == (threads, steps), result)
    expect(0 < result["min_ms"] <= result["median_ms"] <= result["max_ms"], result)
    per_second = batch / result["median_ms"] * 1000
    expect(abs(result["samples_per_second"] - per_second) <= 1e-3 * per_second, result)
    expect(result["peak_rss_mib"] > 1, result)


def main(tandem):
    check(bench(tandem, "--threads", "1", "bench", "--model", "tiny", "--steps", "5"),
          "tiny", 30, "cpu:0", 1, 5)
    check(bench(tandem, "bench", "--model", "mlp", "--batch-size", "16", "--steps", "3",
                "--warmup", "0", "--threads", "2"), "mlp", 16, "cpu:0", 2, 3)
    check(bench(tandem, "--threads", "2", "bench", "--model", "mlp", "--batch-size", "8",
                "--devices", "cpu:0,cpu:1", "--steps", "2"), "mlp", 8, "cpu:0,cpu:1", 2, 2)
    uneven = bench(tandem, "--threads", "2", "bench", "--model", "mlp", "--batch-size", "8",
                   "--devices", "cpu:0,cpu:1", "--steps", "2", "--balance", "3,1")
    check(uneven, "mlp", 8, "cpu:0,cpu:1", 2, 2)
    expect((uneven["balance"], uneven["shares"]) == ("3,1", "0.75/0.25"), uneven)
    expect(uneven["micro_batch"] == 0, uneven)
    invariant = bench(tandem, "--threads", "2", "bench", "--model", "mlp", "--batch-size", "8",
                      "--devices", "cpu:0,cpu:1", "--steps", "2", "--invariant",
                      "--micro-batch", "4")
    check(invariant, "mlp", 8, "cpu:0,cpu:1", 2, 2)
    expect(invariant["micro_batch"] == 4, invariant)
    check(bench(tandem, "bench", "--model", "cnn", "--batch-size", "4", "--steps", "2",
                "--threads", "1"), "cnn", 4, "cpu:0", 1, 2)
    check(bench(tandem, "bench", "--model", "resnet", "--batch-size", "4", "--steps", "2",
                "--threads", "1"), "resnet", 4, "cpu:0", 1, 2)
    for flags, message in [(["--model", "resnet9000"], "unknown model 'resnet9000'"),
                           (["--steps", "0"], "--steps: expects a whole number >= 1"),
                           (["--batch-size", "-1"],
                            "--batch-size: expects a whole number >= 1"),
                           (["--devices", "cpu:0,cpu:0"], "listed twice"),
                           (["--devices", "cpu:0,cpu:1", "--balance", "1"],
                            "--balance 1: expected one share per device (2 devices)"),
                           (["--balance", "fast"], "--balance: expected even, auto")]:
        run = subprocess.run([tandem, "bench", *flags], capture_output=True, text=True)
        expect(run.returncode == 2 and message in run.stderr, (flags, run.stderr))
    print("check_bench: ok")


if __name__ == "__main__":
    main(sys.argv[1])
