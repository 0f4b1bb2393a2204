"""Runs `tandem train --resume` as a user would, on the tiny synthetic
dataset of check_train.py, and checks that a checkpoint holds the whole run:

- a run stopped after some steps and resumed with `--resume PATH` alone
  ends byte-identical to the uninterrupted run, though the run's flags
  (--epochs 3, --devices cpu:0,cpu:1, adam, float64, ...) are not the
  defaults;
- a flag that would change the run is refused, naming the flag, the
  checkpoint's value and the given one; --epochs extends the run and says
  how the schedule changes; an --epochs before the checkpoint is refused;
  flags that leave the numbers alone are accepted;
- an older checkpoint without the run's epochs asks for --epochs, and
  continues exactly once given;
- damaged metadata (a non-numeric loss sum, an epoch or step out of range)
  is an error naming the field and the value.

Usage: check_train_resume.py PATH_TO_TANDEM"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in, fail, read, run  # noqa: E402
import safetensors_edit  # noqa: E402

RUN = ["--model", "mlp", "--epochs", "3", "--batch-size", "64", "--devices",
       "cpu:0,cpu:1", "--optimizer", "adam", "--lr", "0.002", "--dtype", "float64",
       "--weight-decay", "0.001", "--seed", "4", "--on-nonfinite", "skip"]


def stopped_run(tandem, data, work, name, steps):
    path = os.path.join(work, name + ".safetensors")
    out = run(tandem, "train", "--data", data, *RUN, "--max-steps", str(steps),
              "--checkpoint", path).stdout
    if f"continue with --resume {path}" not in out:
        fail(f"no resume hint after --max-steps {steps}:\n{out}")
    return path


def check_resume_alone(tandem, data, work, straight):
    for steps in (13, 20):  # mid-epoch, and at an epoch's end
        path = stopped_run(tandem, data, work, f"stopped-{steps}", steps)
        out = run(tandem, "train", "--resume", path).stdout
        if "resuming at epoch" not in out or "done: 3 epochs (30 steps" not in out:
            fail(f"--resume alone after {steps} steps did not finish the 3-epoch run:\n{out}")
        if read(path) != read(straight):
            fail(f"--resume alone after {steps} steps ends differently from the "
                 "uninterrupted run")
    print("--resume alone: byte-identical to the uninterrupted run (after 13 and 20 steps)")


def check_flags(tandem, data, work):
    path = stopped_run(tandem, data, work, "flags", 13)
    for flag, value, recorded in (("--lr", "0.1", "0.002"), ("--model", "cnn", "mlp"),
                                  ("--batch-size", "32", "64"),
                                  ("--weight-decay", "0", "0.001"),
                                  ("--dtype", "float32", "float64")):
        err = run(tandem, "train", "--resume", path, flag, value, expect=2).stderr
        if f"{flag} {value} (the checkpoint has {recorded})" not in err:
            fail(f"{flag} {value} with --resume: no refusal naming both values:\n{err}")
    err = run(tandem, "train", "--resume", path, "--epochs", "1", expect=2).stderr
    if "--epochs 1 ends the run before the checkpoint" not in err:
        fail(f"--epochs before the checkpoint's position not refused:\n{err}")
    extended = os.path.join(work, "extended.safetensors")
    out = run(tandem, "train", "--resume", path, "--epochs", "4", "--checkpoint", extended,
              "--workers", "1", "--metrics", os.path.join(work, "m.jsonl")).stdout
    if ("extending the run from 3 to 4 epochs; the cosine schedule is re-planned over "
            "4 epochs from step 13" not in out or "done: 4 epochs (40 steps" not in out):
        fail(f"--epochs 4 did not say how it extends the run:\n{out}")
    print("flags: changes refused naming both values, --epochs extends and says so")


def check_weight_decay_counts(tandem, data, work, straight):
    plain = os.path.join(work, "no-decay.safetensors")
    decayed = RUN.index("--weight-decay")
    run(tandem, "train", "--data", data, *RUN[:decayed], *RUN[decayed + 2:],
        "--checkpoint", plain)
    if read(plain) == read(straight):
        fail("--weight-decay 0.001 trained the same weights as no weight decay")
    print("--weight-decay: recorded, resumed, and it changes the weights")


def check_older_checkpoint(tandem, work, straight):
    path = stopped_run(tandem, os.path.join(work, "data"), work, "older", 13)
    safetensors_edit.with_metadata(path, path, {"extra.epochs": None})
    err = run(tandem, "train", "--resume", path, expect=2).stderr
    if "does not record the run's --epochs" not in err or "give --epochs" not in err:
        fail(f"an older checkpoint without epochs: no clear error:\n{err}")
    run(tandem, "train", "--resume", path, "--epochs", "3")
    if read(path) != read(straight):
        fail("an older checkpoint resumed with --epochs 3 differs from the straight run")
    print("an older checkpoint without epochs: asks for --epochs, then continues exactly")


def check_damaged_metadata(tandem, work):
    path = stopped_run(tandem, os.path.join(work, "data"), work, "damaged", 13)
    damaged = os.path.join(work, "damaged-edit.safetensors")
    for key, value in (("extra.epoch_loss_sum", "abc"), ("extra.epoch_loss_sum", "1e999"),
                       ("extra.epoch_samples", "-5"),
                       ("checkpoint.epoch", "9223372036854775807"),
                       ("checkpoint.step", "9223372036854775807")):
        safetensors_edit.with_metadata(path, damaged, {key: value})
        result = run(tandem, "train", "--resume", damaged, expect=1)
        field = key.split(".", 1)[1]
        if field not in result.stderr or value not in result.stderr or \
                "stod" in result.stderr or "epoch 1/" in result.stdout:
            fail(f"{key} = {value}: no error naming the field and value", result)
    print("damaged metadata: an error naming the field and its value")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        straight = os.path.join(work, "straight.safetensors")
        run(tandem, "train", "--data", data, *RUN, "--checkpoint", straight)
        check_resume_alone(tandem, data, work, straight)
        check_flags(tandem, data, work)
        check_weight_decay_counts(tandem, data, work, straight)
        check_older_checkpoint(tandem, work, straight)
        check_damaged_metadata(tandem, work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
