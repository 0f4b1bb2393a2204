"""Runs `tandem train` under mpiexec as a user would, on the tiny synthetic
MNIST-format dataset of check_train.py, and checks:

- 2 processes compute what one process computes on the whole batches:
  bitwise the weights of DataParallel over cpu:0,cpu:1 in one process (the
  same split of every batch, and DistributedDataParallel's average of two
  half-batch gradients is exactly DataParallel's sum), and the weights of
  one device within float tolerance (summation order differs);
- in float64 (--dtype), 2 processes and 3 (parts of 22, 21, 21 rows of a
  64-row batch, losses weighted by part size) match one device to 1e-12;
- exact resume: N steps straight and N/2, stop, --resume, N/2 under
  mpiexec write byte-identical checkpoints;
- SIGINT to the processes (Ctrl-C in a terminal) stops them all after the
  same step with exit 130 and a checkpoint that evaluates;
- a process killed mid-training ends the job, non-zero, within a bounded
  time, leaving no process behind;
- several devices per process is a usage error;
- an error every process meets (a bad flag, a missing checkpoint, an
  unwritable path, a NaN loss) is printed once, not once per process.

Usage: check_train_distributed.py --mpiexec PATH [--numproc-flag -np]
                                  [--flags "--allow-run-as-root;--oversubscribe"] TANDEM"""
import argparse
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile
import time
from array import array

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in  # noqa: E402

COMMON = ["--model", "mlp", "--batch-size", "64", "--seed", "5", "--lr-schedule", "constant"]
JOB_BOUND = 60.0  # seconds for a killed job to end, start-up included


def fail(message, output=""):
    sys.exit(f"FAILED: {message}\n{output}")


def model_weights(path):
    """The "model.*" float32 tensors of a tandem checkpoint (safetensors)."""
    with open(path, "rb") as f:
        size = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(size))
        data = f.read()
    weights = {}
    for key, entry in header.items():
        if not key.startswith("model.") or entry["dtype"] not in ("F32", "F64"):
            continue
        begin, end = entry["data_offsets"]
        weights[key] = array("f" if entry["dtype"] == "F32" else "d", data[begin:end])
    return weights


def worst_relative_difference(a, b):
    if a.keys() != b.keys():
        fail(f"different tensors: {sorted(a)} and {sorted(b)}")
    worst = 0.0
    for key in a:
        scale = max(max(abs(v) for v in a[key]), 1e-30)
        diff = max(abs(x - y) for x, y in zip(a[key], b[key]))
        worst = max(worst, diff / scale)
    return worst


class Launcher:
    def __init__(self, args):
        self.mpiexec = args.mpiexec
        self.numproc_flag = args.numproc_flag
        self.flags = [f for f in re.split(r"[;\s]+", args.flags) if f]
        self.tandem = args.tandem

    def command(self, np, *args):
        return [self.mpiexec, self.numproc_flag, str(np), *self.flags, self.tandem, *args]

    def run(self, np, *args, expect=0):
        result = subprocess.run(self.command(np, *args), capture_output=True, text=True,
                                timeout=600)
        if result.returncode != expect:
            fail(f"mpiexec -np {np} tandem {' '.join(args)}: exit {result.returncode}, "
                 f"expected {expect}", result.stdout + result.stderr)
        return result

    def alone(self, *args):
        return self.alone_expecting(0, *args)

    def alone_expecting(self, expect, *args):
        result = subprocess.run([self.tandem, *args], capture_output=True, text=True,
                                timeout=600)
        if result.returncode != expect:
            fail(f"tandem {' '.join(args)}: exit {result.returncode}, expected {expect}",
                 result.stdout + result.stderr)
        return result


def check_same_training(launch, data, work):
    def trained(name, np, *extra, steps=None):
        path = os.path.join(work, name + ".safetensors")
        args = ["train", "--data", data, *COMMON, "--epochs", "2", "--checkpoint", path,
                *extra]
        if steps:
            args += ["--max-steps", str(steps)]
        if np:
            launch.run(np, *args)
        else:
            launch.alone(*args)
        return model_weights(path)

    one_device = trained("one-device", None, "--devices", "cpu:0")
    two_devices = trained("two-devices", None, "--devices", "cpu:0,cpu:1")
    two_processes = trained("two-processes", 2)
    if two_processes != two_devices:
        fail("2 processes differ from DataParallel over cpu:0,cpu:1: worst relative "
             f"difference {worst_relative_difference(two_processes, two_devices):.3g}")
    print("2 processes, 2 epochs: bitwise the weights of DataParallel over cpu:0,cpu:1")
    worst = worst_relative_difference(two_processes, one_device)
    if worst > 1e-5:
        fail(f"2 processes differ from one device by {worst:.3g} (relative to max |w|)")
    print(f"2 processes, 2 epochs: one device's weights within {worst:.2g} (relative)")
    # In float64 the rounding that float32 training amplifies step by step
    # stays far below any difference that matters.
    one_device = trained("one-device-64", None, "--devices", "cpu:0", "--dtype", "float64")
    two_processes = trained("two-processes-64", 2, "--dtype", "float64")
    worst = worst_relative_difference(two_processes, one_device)
    if worst > 1e-12:
        fail(f"float64: 2 processes differ from one device by {worst:.3g}")
    print(f"float64, 2 processes, 2 epochs: one device's weights within {worst:.2g}")
    three_processes = trained("three-processes-64", 3, "--dtype", "float64")
    worst = worst_relative_difference(three_processes, one_device)
    if worst > 1e-12:
        fail(f"float64: 3 processes differ from one device by {worst:.3g}")
    print(f"float64, 3 processes (parts 22/21/21), 2 epochs: one device's weights within "
          f"{worst:.2g}")


def check_exact_resume(launch, data, work, processes, steps=12):
    """With 3 processes the buckets' layout decides how their sums round: the
    resumed run must bucket as the straight one did after its first step
    (the checkpoint's grad_ready_order)."""
    args = ["train", "--data", data, *COMMON, "--epochs", "3"]
    straight = os.path.join(work, f"straight-{processes}.safetensors")
    half = os.path.join(work, f"half-{processes}.safetensors")
    resumed = os.path.join(work, f"resumed-{processes}.safetensors")
    launch.run(processes, *args, "--max-steps", str(steps), "--checkpoint", straight)
    out = launch.run(processes, *args, "--max-steps", str(steps // 2),
                     "--checkpoint", half).stdout
    if f"stopped at --max-steps {steps // 2}" not in out:
        fail("no stop message from process 0", out)
    launch.run(processes, "train", "--resume", half, "--data", data, "--epochs", "3",
               "--max-steps", str(steps), "--checkpoint", resumed)
    with open(straight, "rb") as a, open(resumed, "rb") as b:
        if a.read() != b.read():
            fail(f"a resumed {processes}-process run differs from the straight one")
    print(f"exact resume under mpiexec with {processes} processes: {steps} steps, "
          "byte-identical checkpoints")


def job_processes(leader):
    """The job's processes (mpiexec's children)."""
    out = subprocess.run(["pgrep", "-P", str(leader)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


def start_long_job(launch, data, checkpoint):
    job = subprocess.Popen(
        launch.command(2, "train", "--data", data, *COMMON, "--epochs", "100000",
                       "--batch-size", "16", "--checkpoint", checkpoint),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.time() + 60
    while not os.path.exists(checkpoint) and time.time() < deadline:
        time.sleep(0.1)  # the first epoch's checkpoint: training is under way
    ranks = job_processes(job.pid)
    if len(ranks) != 2:
        job.kill()
        fail(f"expected 2 processes under mpiexec, found {ranks}")
    return job, ranks


def left_behind(job):
    """The job's processes still alive (its session's), given up to 5 s to exit."""
    deadline = time.time() + 5
    while True:
        out = subprocess.run(["pgrep", "-s", str(job.pid)], capture_output=True, text=True)
        left = out.stdout.split()
        if not left or time.time() > deadline:
            return left
        time.sleep(0.2)


def kill_session(job):
    for pid in subprocess.run(["pgrep", "-s", str(job.pid)], capture_output=True,
                              text=True).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def check_interrupt(launch, data, work):
    checkpoint = os.path.join(work, "interrupted.safetensors")
    job, ranks = start_long_job(launch, data, checkpoint)
    for pid in ranks:  # what Ctrl-C in a terminal does
        os.kill(pid, signal.SIGINT)
    out, err = job.communicate(timeout=120)
    if job.returncode != 128 + signal.SIGINT:
        fail(f"exit {job.returncode} after SIGINT, expected 130", out + err)
    if "stopped by SIGINT" not in out or f"checkpoint: {checkpoint}" not in out:
        fail("no stop message naming the checkpoint", out + err)
    result = launch.alone("eval", "--checkpoint", checkpoint, "--data", data)
    if "test_accuracy" not in result.stdout:
        fail("the checkpoint does not evaluate", result.stdout)
    print("SIGINT under mpiexec: every process stops, exit 130, a checkpoint that evaluates")


def check_killed_process(launch, data, work):
    job, ranks = start_long_job(launch, data, os.path.join(work, "killed.safetensors"))
    start = time.time()
    os.kill(ranks[1], signal.SIGKILL)
    try:
        out, err = job.communicate(timeout=JOB_BOUND)
    except subprocess.TimeoutExpired:
        kill_session(job)
        fail(f"the job did not end within {JOB_BOUND} s of a process being killed")
    seconds = time.time() - start
    if job.returncode == 0:
        fail("the job exited 0 although a process was killed", out + err)
    left = left_behind(job)
    if left:
        ps = subprocess.run(["ps", "-o", "pid,stat,args", "-p", ",".join(left)],
                            capture_output=True, text=True).stdout
        kill_session(job)
        fail(f"processes left behind: {left}\n{ps}", out + err)
    print(f"a killed process ends the job: exit {job.returncode} after {seconds:.1f} s, "
          "nothing left behind")


def check_usage(launch, data):
    result = launch.run(2, "train", "--data", data, *COMMON, "--devices", "cpu:0,cpu:1",
                        expect=2)
    if "each process trains on one device" not in result.stderr:
        fail("no usage error for several devices per process", result.stderr)
    print("several devices per process: a usage error")


def check_errors_printed_once(launch, data, work):
    cases = [(["--epochs", "x"], "--epochs"),
             (["--resume", os.path.join(work, "missing.safetensors")], "missing.safetensors"),
             (["--checkpoint", "/sys/run.safetensors"], "Permission denied"),
             (["--lr", "1e6"], "the loss is nan at epoch 1"),
             (["--devices", "cpu:0,cpu:1"], "lists several devices")]
    for extra, what in cases:
        command = launch.command(2, "train", "--data", data, *COMMON, "--epochs", "1",
                                 *extra)
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        errors = [line for line in result.stderr.splitlines() if "error: " in line]
        if result.returncode == 0 or len(errors) != 1 or what not in errors[0]:
            fail(f"train {' '.join(extra)} under mpiexec -np 2: exit {result.returncode}, "
                 f"expected one error line naming {what!r}, got {len(errors)}",
                 result.stdout + result.stderr)
    print("errors every process meets: printed once under mpiexec")


def launcher_from_command_line():
    """The Launcher the usage line describes; the collectives time out after 20 s."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--numproc-flag", default="-np")
    parser.add_argument("--flags", default="")
    parser.add_argument("tandem")
    os.environ["TANDEM_DISTRIBUTED_TIMEOUT"] = "20"
    return Launcher(parser.parse_args())


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        check_same_training(launch, data, work)
        check_exact_resume(launch, data, work, 2)
        check_exact_resume(launch, data, work, 3)
        check_interrupt(launch, data, work)
        check_killed_process(launch, data, work)
        check_usage(launch, data)
        check_errors_printed_once(launch, data, work)


if __name__ == "__main__":
    main()
