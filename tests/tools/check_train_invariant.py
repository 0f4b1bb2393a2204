"""Runs `tandem train --invariant` (issue 18) as a user would, on the tiny
synthetic MNIST-format dataset of check_train.py, and checks the promise of
invariant mode bit for bit: every tensor of the checkpoint (weights,
optimizer state, the generator) has the same bytes after the same steps

- on --devices cpu:0, cpu:0,cpu:1, cpu:0,cpu:1,cpu:2 and cpu:0..cpu:3, with
  even shares, --balance 3,1, --balance 1,2,3,4 and --balance auto, with
  SGD-momentum and with Adam;
- under mpiexec with 1, 2 and 3 processes (DistributedDataParallel), with
  even shares, --balance 1,2 and --balance auto: the bytes of the run in
  one process;
- when a run on two devices is stopped half way and resumed on one device,
  on three, or on four with --balance auto, or under mpiexec -np 3; and a
  run of two processes resumed by three, and by one: the same bytes as the
  run that was never stopped;

and that the checkpoints differ only in the metadata that names the devices.
Refusals: --invariant with --micro-batch 0, a model with BatchNorm while
training (named), a resume that would change the micro-batch, more
processes than a batch has micro-batches.

Usage: check_train_invariant.py --mpiexec PATH [--numproc-flag -np]
                                [--flags "--allow-run-as-root;--oversubscribe"] TANDEM"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in  # noqa: E402
from check_train_distributed import COMMON, fail, launcher_from_command_line  # noqa: E402
from safetensors_edit import read  # noqa: E402

STEPS = 10  # over two epochs of the tiny dataset's batches of 64
# A batch of 60 rows in micro-batches of 8: 8 micro-batches, the last short.
INVARIANT = ["--invariant", "--micro-batch", "8", "--epochs", "2"]


def tensors(path):
    """name -> bytes of every tensor of the checkpoint."""
    header, data = read(path)
    out = {}
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        out[key] = (entry["dtype"], tuple(entry["shape"]), data[begin:end])
    return out


class Runs:
    def __init__(self, launch, data, work):
        self.launch, self.data, self.work = launch, data, work

    def train(self, name, *extra, steps=STEPS, np=None):
        path = os.path.join(self.work, name + ".safetensors")
        self.output = self.tandem(np, "train", "--data", self.data, *COMMON, *INVARIANT,
                                  "--checkpoint", path, "--max-steps", str(steps),
                                  *extra).stdout
        return path

    def resume(self, half, name, *extra, np=None):
        path = os.path.join(self.work, name + ".safetensors")
        self.output = self.tandem(np, "train", "--resume", half, "--data", self.data,
                                  "--checkpoint", path, "--max-steps", str(STEPS),
                                  *extra).stdout
        return path

    def tandem(self, np, *args):
        """One process, or `np` under mpiexec."""
        return self.launch.run(np, *args) if np else self.launch.alone(*args)


def expect_same_bytes(reference, path, what):
    want, got = tensors(reference), tensors(path)
    if want.keys() != got.keys():
        fail(f"{what}: tensors {sorted(got)} instead of {sorted(want)}")
    differing = [k for k in want if want[k] != got[k]]
    if differing:
        fail(f"{what}: {len(differing)} tensors differ from the reference run's: "
             f"{differing[:5]}")
    print(f"{what}: all {len(want)} tensors bitwise equal")


def check_device_lists(runs, optimizer):
    extra = ["--optimizer", optimizer]
    reference = runs.train(f"ref-{optimizer}", "--devices", "cpu:0", *extra)
    if "invariant: micro-batches of 8" not in runs.output:
        fail("the run's first line does not say it is invariant", runs.output)
    for name, flags in (
            ("2", ["--devices", "cpu:0,cpu:1"]),
            ("2-3-1", ["--devices", "cpu:0,cpu:1", "--balance", "3,1"]),
            ("3", ["--devices", "cpu:0,cpu:1,cpu:2"]),
            ("4-1-2-3-4", ["--devices", "cpu:0,cpu:1,cpu:2,cpu:3", "--balance", "1,2,3,4"]),
            ("4-auto", ["--devices", "cpu:0,cpu:1,cpu:2,cpu:3", "--balance", "auto"])):
        path = runs.train(f"{name}-{optimizer}", *flags, *extra)
        expect_same_bytes(reference, path, f"{optimizer} on {' '.join(flags)}")
    return reference


def check_processes(runs, reference, optimizer):
    extra = ["--optimizer", optimizer]
    for np, flags in ((1, []), (2, []), (3, []), (2, ["--balance", "1,2"]),
                      (3, ["--balance", "auto"])):
        path = runs.train(f"np{np}-{'-'.join(flags)}-{optimizer}", *flags, *extra, np=np)
        expect_same_bytes(reference, path,
                          f"{optimizer} under mpiexec -np {np} {' '.join(flags)}")


def check_resume_across_processes(runs, reference):
    half = runs.train("half-np2", steps=STEPS // 2, np=2)
    for np in (3, 1):
        path = runs.resume(half, f"np2-on-np{np}", np=np)
        expect_same_bytes(reference, path, f"-np 2 stopped at step {STEPS // 2}, "
                                           f"resumed under -np {np}")
    half = runs.train("half-2-devices", "--devices", "cpu:0,cpu:1", steps=STEPS // 2)
    path = runs.resume(half, "2-devices-on-np3", np=3)
    expect_same_bytes(reference, path, f"cpu:0,cpu:1 stopped at step {STEPS // 2}, "
                                       "resumed under -np 3")


def check_resume_at_another_world_size(runs, reference):
    half = runs.train("half", "--devices", "cpu:0,cpu:1", steps=STEPS // 2)
    for name, flags in (("on-1", ["--devices", "cpu:0"]),
                        ("on-3", ["--devices", "cpu:0,cpu:1,cpu:2"]),
                        ("on-4-auto", ["--devices", "cpu:0,cpu:1,cpu:2,cpu:3",
                                       "--balance", "auto"])):
        path = runs.resume(half, name, *flags)
        if "invariant mode: the numbers stay those of an uninterrupted run" not in runs.output:
            fail("the resume note does not say the numbers stay the same", runs.output)
        expect_same_bytes(reference, path, f"cpu:0,cpu:1 stopped at step {STEPS // 2}, "
                                           f"resumed with {' '.join(flags)}")
    header, _ = read(path)
    if header["__metadata__"].get("extra.micro_batch") != "8":
        fail("the checkpoint does not record the micro-batch", str(header["__metadata__"]))
    result = runs.launch.alone_expecting(2, "train", "--resume", half, "--data", runs.data,
                                         "--micro-batch", "16")
    if "--micro-batch 16 (the checkpoint has 8)" not in result.stderr:
        fail("a resume that changes the micro-batch is not refused", result.stderr)
    print("resume: another micro-batch refused")


def check_refusals(launch, data):
    train = ["train", "--data", data, "--max-steps", "1"]
    result = launch.alone_expecting(2, *train, "--invariant", "--micro-batch", "0")
    if "--invariant: --micro-batch 0 turns invariant mode off" not in result.stderr:
        fail("--invariant --micro-batch 0 is not refused", result.stderr)
    result = launch.run(3, *train, "--invariant", "--micro-batch", "32", "--batch-size",
                        "64", expect=2)
    if result.stderr.count("has 2 micro-batches of 32 for 3 processes") != 1:
        fail("--invariant under mpiexec with fewer micro-batches than processes: expected "
             "one refusal", result.stderr)
    result = launch.alone_expecting(1, *train, "--model", "cnn", "--invariant",
                                    "--devices", "cpu:0,cpu:1")
    if "invariant mode cannot run BatchNorm2d at '1'" not in result.stderr:
        fail("the CNN's BatchNorm2d is not named", result.stderr)
    print("refusals: --micro-batch 0, too few micro-batches for the processes, "
          "BatchNorm named")


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        runs = Runs(launch, data, work)
        reference = check_device_lists(runs, "sgd")
        check_processes(runs, reference, "sgd")
        adam = check_device_lists(runs, "adam")
        check_processes(runs, adam, "adam")
        check_resume_at_another_world_size(runs, reference)
        check_resume_across_processes(runs, reference)
        check_refusals(launch, data)


if __name__ == "__main__":
    main()
