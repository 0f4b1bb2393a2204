"""Runs `tandem train` with shares of the batch (issue 18) as a user would,
on the tiny synthetic MNIST-format dataset of check_train.py, in float64,
and checks that every run ends within 1e-12 (relative) of one device
training the whole batches, which it can only do if every step saw exactly
the batch's samples, none lost or seen twice, and weighted the parts'
gradients by their rows:

- DataParallel over cpu:0,cpu:1 with --balance 3,1 and --balance auto;
- 2 processes under mpiexec with --balance 3,1 and auto, 3 with 1,2,3;
- resume at another world size: 2 processes stopped half way, resumed with
  3 processes, with 1, and with --balance auto; 2 devices resumed on 1;
- bad shares (wrong count, negative, all zero) are usage errors naming the
  flag, printed once under mpiexec; --balance with --workers under mpiexec
  is refused;
- `tandem bench` under mpiexec takes one share per process, as train does,
  and reports them.

Usage: check_train_shares.py --mpiexec PATH [--numproc-flag -np]
                             [--flags "--allow-run-as-root;--oversubscribe"] TANDEM"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in  # noqa: E402
from check_train_distributed import (COMMON, fail, launcher_from_command_line,  # noqa: E402
                                     model_weights, worst_relative_difference)

STEPS = 10  # over two epochs of the tiny dataset's batches of 64
F64 = ["--dtype", "float64", "--epochs", "2"]


class Runs:
    def __init__(self, launch, data, work):
        self.launch, self.data, self.work = launch, data, work
        self.reference = self.train("one-device", None, "--devices", "cpu:0")

    def train(self, name, np, *extra, steps=STEPS):
        path = os.path.join(self.work, name + ".safetensors")
        args = ["train", "--data", self.data, *COMMON, *F64, "--checkpoint", path,
                "--max-steps", str(steps), *extra]
        self.output = (self.launch.run(np, *args) if np else self.launch.alone(*args)).stdout
        return path

    def resume(self, half, name, np, *extra):
        path = os.path.join(self.work, name + ".safetensors")
        args = ["train", "--resume", half, "--data", self.data, "--checkpoint", path,
                "--max-steps", str(STEPS), *extra]
        self.output = (self.launch.run(np, *args) if np else self.launch.alone(*args)).stdout
        return path

    def expect_reference(self, path, what):
        worst = worst_relative_difference(model_weights(path), model_weights(self.reference))
        if worst > 1e-12:
            fail(f"{what}: the weights differ from one device's by {worst:.3g}", self.output)
        print(f"{what}: one device's weights within {worst:.2g}")


def check_shares(runs):
    path = runs.train("dp-3-1", None, "--devices", "cpu:0,cpu:1", "--balance", "3,1")
    if "shares 0.75/0.25" not in runs.output:
        fail("the epoch line does not show the shares", runs.output)
    runs.expect_reference(path, "DataParallel cpu:0,cpu:1 --balance 3,1")
    path = runs.train("dp-auto", None, "--devices", "cpu:0,cpu:1", "--balance", "auto")
    runs.expect_reference(path, "DataParallel cpu:0,cpu:1 --balance auto")
    path = runs.train("np2-3-1", 2, "--balance", "3,1")
    runs.expect_reference(path, "2 processes --balance 3,1")
    path = runs.train("np2-auto", 2, "--balance", "auto")
    runs.expect_reference(path, "2 processes --balance auto")
    path = runs.train("np3-1-2-3", 3, "--balance", "1,2,3")
    runs.expect_reference(path, "3 processes --balance 1,2,3")


def check_resume_at_another_world_size(runs):
    half = runs.train("np2-half", 2, steps=STEPS // 2)
    for np, extra, what in ((3, [], "2 processes, resumed with 3"),
                            (None, ["--devices", "cpu:0"], "2 processes, resumed with 1"),
                            (3, ["--balance", "auto"], "2 processes, resumed with 3 --balance auto")):
        path = runs.resume(half, what.replace(" ", "-").replace(",", ""), np, *extra)
        runs.expect_reference(path, what)
    half = runs.train("dp-half", None, "--devices", "cpu:0,cpu:1", steps=STEPS // 2)
    path = runs.resume(half, "dp-resumed-on-one", None, "--devices", "cpu:0")
    runs.expect_reference(path, "cpu:0,cpu:1, resumed on cpu:0")


def check_bad_shares(launch, data):
    train = ["train", "--data", data, "--max-steps", "1"]
    for np, balance, needle in (
            (None, "1,2,3", "--balance 1,2,3: expected one share per device (2 devices) but got 3"),
            (None, "1,-1", "--balance 1,-1: share 1 is -1"),
            (None, "0,0", "--balance 0,0: every share is 0"),
            (3, "1,2", "--balance 1,2: expected one share per device (3 devices) but got 2")):
        devices = ["--devices", "cpu:0,cpu:1"] if np is None else []
        if np is None:
            result = launch.alone_expecting(2, *train, *devices, "--balance", balance)
        else:
            result = launch.run(np, *train, "--balance", balance, expect=2)
        if result.stderr.count(needle) != 1:
            fail(f"--balance {balance}: expected the error once", result.stderr)
    result = launch.run(2, *train, "--balance", "auto", "--workers", "2", expect=2)
    if result.stderr.count("use --workers 0") != 1:
        fail("--balance auto --workers 2 under mpiexec: expected one refusal", result.stderr)
    print("bad shares: usage errors naming the flag, printed once")


def check_bench_shares(launch):
    result = launch.run(2, "--threads", "1", "bench", "--model", "mlp", "--batch-size", "16",
                        "--steps", "2", "--warmup", "0", "--balance", "3,1")
    report = json.loads(result.stdout.splitlines()[-1])
    if (report["processes"], report["balance"], report["shares"]) != (2, "3,1", "0.75/0.25"):
        fail("bench --balance 3,1 under mpiexec -np 2: expected shares 0.75/0.25",
             result.stdout + result.stderr)
    print("bench under mpiexec: one share per process")


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        runs = Runs(launch, data, work)
        check_shares(runs)
        check_resume_at_another_world_size(runs)
        check_bad_shares(launch, data)
    check_bench_shares(launch)


if __name__ == "__main__":
    main()
