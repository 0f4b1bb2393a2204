"""Runs `tandem train --invariant` (issue 18) as a user would, on the tiny
synthetic MNIST-format dataset of check_train.py, and checks the promise of
invariant mode bit for bit: every tensor of the checkpoint (weights,
optimizer state, the generator) has the same bytes after the same steps

- on --devices cpu:0, cpu:0,cpu:1, cpu:0,cpu:1,cpu:2 and cpu:0..cpu:3, with
  even shares, --balance 3,1, --balance 1,2,3,4 and --balance auto, with
  SGD-momentum and with Adam;
- when a run on two devices is stopped half way and resumed on one device,
  on three, or on four with --balance auto: the same bytes as the run that
  was never stopped;

and that the checkpoints differ only in the metadata that names the devices.
Refusals: --invariant with --micro-batch 0, --invariant under mpiexec, a
model with BatchNorm while training (named), a resume that would change
the micro-batch.

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

    def train(self, name, *extra, steps=STEPS):
        path = os.path.join(self.work, name + ".safetensors")
        result = self.launch.alone("train", "--data", self.data, *COMMON, *INVARIANT,
                                   "--checkpoint", path, "--max-steps", str(steps), *extra)
        self.output = result.stdout
        return path

    def resume(self, half, name, *extra):
        path = os.path.join(self.work, name + ".safetensors")
        result = self.launch.alone("train", "--resume", half, "--data", self.data,
                                   "--checkpoint", path, "--max-steps", str(STEPS), *extra)
        self.output = result.stdout
        return path


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
    result = launch.run(2, *train, "--invariant", expect=2)
    if result.stderr.count("under mpirun (DistributedDataParallel) it is not available") != 1:
        fail("--invariant under mpiexec: expected one refusal", result.stderr)
    result = launch.alone_expecting(1, *train, "--model", "cnn", "--invariant",
                                    "--devices", "cpu:0,cpu:1")
    if "invariant mode cannot run BatchNorm2d at '1'" not in result.stderr:
        fail("the CNN's BatchNorm2d is not named", result.stderr)
    print("refusals: --micro-batch 0, mpiexec, BatchNorm named")


def main():
    launch = launcher_from_command_line()
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        runs = Runs(launch, data, work)
        reference = check_device_lists(runs, "sgd")
        check_device_lists(runs, "adam")
        check_resume_at_another_world_size(runs, reference)
        check_refusals(launch, data)


if __name__ == "__main__":
    main()
