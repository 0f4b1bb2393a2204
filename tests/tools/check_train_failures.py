"""Runs `tandem train` into failures a user meets, on the tiny synthetic
dataset of check_train.py, and checks each is caught at once:

- a checkpoint or metrics path that cannot be written (a missing folder, a
  path that is a folder, a file as a folder, /sys where even root cannot
  create a file) fails before the first epoch, with the system's reason;
- a loss that turns NaN (--lr 1e6) stops the run, exit 1, naming the epoch
  and the step, and the checkpoint already at the path is not overwritten
  with NaN weights; --on-nonfinite skip skips those steps and counts them.

Usage: check_train_failures.py PATH_TO_TANDEM"""
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in, fail, read, run  # noqa: E402

RUN = ["--model", "mlp", "--epochs", "2", "--batch-size", "64"]


def check_paths(tandem, data, work):
    a_file = os.path.join(work, "a-file")
    with open(a_file, "w") as f:
        f.write("not a folder\n")
    cases = [(os.path.join(work, "missing", "run.safetensors"), "No such file or directory"),
             (work, "is a folder"),
             (os.path.join(a_file, "run.safetensors"), "Not a directory"),
             ("/sys/run.safetensors", "Permission denied")]
    for flag, what in (("--checkpoint", "checkpoint"), ("--metrics", "metrics file")):
        for path, reason in cases:
            result = run(tandem, "train", "--data", data, *RUN, flag, path, expect=1)
            if f"cannot write the {what} '{path}'" not in result.stderr or \
                    reason not in result.stderr:
                fail(f"{flag} {path}: no error naming it and '{reason}'", result)
            if "epoch 1/" in result.stdout:
                fail(f"{flag} {path}: trained before failing", result)
    if [name for name in os.listdir(work) if "probe" in name]:
        fail(f"a probe file was left behind in {work}: {os.listdir(work)}")
    print("unwritable checkpoint and metrics paths: refused before training, with the reason")


def check_nan_stops(tandem, data, work):
    checkpoint = os.path.join(work, "finite.safetensors")
    run(tandem, "train", "--data", data, *RUN, "--checkpoint", checkpoint)
    before = read(checkpoint)
    result = run(tandem, "train", "--data", data, *RUN, "--lr", "1e6",
                 "--checkpoint", checkpoint, expect=1)
    if "the loss is nan at epoch 1, step 3" not in result.stderr or \
            "done" in result.stdout:
        fail("a NaN loss did not stop the run naming the epoch and step", result)
    if read(checkpoint) != before:
        fail("the NaN run wrote over the checkpoint", result)
    print("a NaN loss: exit 1 naming epoch 1, step 3; the checkpoint left as it was")


def check_nan_skips(tandem, data, work):
    metrics = os.path.join(work, "skipped.jsonl")
    result = run(tandem, "train", "--data", data, *RUN, "--lr", "1e6",
                 "--on-nonfinite", "skip", "--metrics", metrics)
    if "done: 2 epochs (20 steps, 18 skipped for a non-finite loss)" not in result.stdout:
        fail("--on-nonfinite skip did not report the skipped steps", result)
    lines = [json.loads(line) for line in open(metrics)]
    if [m["skipped_steps"] for m in lines] != [8, 18]:
        fail(f"metrics do not count the skipped steps: {lines}")
    print("--on-nonfinite skip: 18 of 20 steps skipped, counted in the output and metrics")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        check_paths(tandem, data, work)
        check_nan_stops(tandem, data, work)
        check_nan_skips(tandem, data, work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
