"""Runs `tandem train` and `tandem eval` as a user would, on a tiny
synthetic MNIST-format dataset (so it takes seconds), and checks:

- exact resume: N steps straight and N/2, stop, new process, --resume, N/2
  write byte-identical checkpoints (weights, optimizer state, RNG state,
  position), for the MLP on two CPU devices and the CNN (batch norm
  buffers) on one and two;
- Ctrl-C: SIGINT mid-training finishes the step, writes the checkpoint,
  says where and exits 130; the checkpoint evaluates;
- the metrics file has one JSON object per epoch with the promised keys;
- bad usage exits 2 with "error: ..."; missing data names the package;
  a corrupt checkpoint is a clear error (exit 1), never a crash.

Usage: check_train.py PATH_TO_TANDEM"""
import gzip
import json
import os
import random
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_edit  # noqa: E402

TRAIN_IMAGES, TEST_IMAGES = 640, 200


def expect(condition, what="check failed"):
    """Fails the run with `what` unless `condition` holds: an explicit exit,
    which `python3 -O` keeps (it strips assert statements)."""
    if not condition:
        sys.exit(f"FAILED: {what}")


def write_idx(path, dims, payload):
    header = struct.pack(">BBBB", 0, 0, 0x08, len(dims)) + b"".join(
        struct.pack(">I", d) for d in dims)
    with gzip.open(path, "wb") as f:
        f.write(header + payload)


def make_dataset(folder):
    """Images whose mean brightness depends on the label: learnable."""
    rng = random.Random(7)
    for prefix, count in (("train", TRAIN_IMAGES), ("t10k", TEST_IMAGES)):
        labels = bytes(rng.randrange(10) for _ in range(count))
        pixels = bytearray()
        for label in labels:
            pixels += bytes(min(255, rng.randrange(40) + 20 * label) for _ in range(784))
        write_idx(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz"),
                  [count, 28, 28], bytes(pixels))
        write_idx(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz"), [count], labels)


def dataset_in(work):
    """make_dataset() in a new folder `work`/data; returns the folder."""
    data = os.path.join(work, "data")
    os.mkdir(data)
    make_dataset(data)
    return data


def fail(message, result=None):
    """Fails the run with `message`, and a command's output if given."""
    detail = f"\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}" if result else ""
    sys.exit(f"FAILED: {message}{detail}")


def run(tandem, *args, expect=0):
    result = subprocess.run([tandem, *args], capture_output=True, text=True, timeout=600)
    if result.returncode != expect:
        fail(f"tandem {' '.join(args)}: exit {result.returncode}, expected {expect}",
             result)
    return result


def read(path):
    with open(path, "rb") as f:
        return f.read()


def check_exact_resume(tandem, data, work, model, devices, steps, extra=()):
    common = ["--data", data, "--model", model, "--devices", devices, "--batch-size", "64",
              "--epochs", "3", "--seed", "3", "--workers", "2", *extra]
    straight = os.path.join(work, f"{model}-straight.safetensors")
    half = os.path.join(work, f"{model}-half.safetensors")
    resumed = os.path.join(work, f"{model}-resumed.safetensors")
    run(tandem, "train", *common, "--max-steps", str(steps), "--checkpoint", straight)
    out = run(tandem, "train", *common, "--max-steps", str(steps // 2),
              "--checkpoint", half).stdout
    expect(f"stopped at --max-steps {steps // 2}" in out, out)
    os.replace(half, half + ".keep")
    # Already at the limit: a resumed run trains no step at all.
    out = run(tandem, "train", "--resume", half + ".keep", "--data", data, "--devices",
              devices, "--max-steps", str(steps // 2), "--checkpoint", half).stdout
    expect(f"after step {steps // 2} " in out, out)
    run(tandem, "train", "--resume", half + ".keep", "--data", data, "--devices", devices,
        "--epochs", "3", "--workers", "0", "--max-steps", str(steps),
        "--checkpoint", resumed)
    expect(read(straight) == read(resumed),
           f"{model} on {devices}: resumed run differs from the straight one")
    print(f"exact resume: {' '.join([model, *extra])} on {devices}, {steps} steps: "
          "byte-identical checkpoints")


def check_augment_is_cut_free(tandem, data, work):
    """--augment draws by image, not by device: in invariant mode the weights
    on one device and on three are the same bits, and differ from a run
    without augmentation."""
    common = ["train", "--data", data, "--model", "mlp", "--batch-size", "64",
              "--epochs", "1", "--seed", "4", "--max-steps", "4", "--invariant"]
    one, three, plain = (os.path.join(work, f"augment-{name}.safetensors")
                         for name in ("one", "three", "plain"))
    run(tandem, *common, "--augment", "--devices", "cpu:0", "--checkpoint", one)
    run(tandem, *common, "--augment", "--devices", "cpu:0,cpu:1,cpu:2",
        "--checkpoint", three)
    run(tandem, *common, "--devices", "cpu:0", "--checkpoint", plain)
    def tensors(path):
        header, payload = safetensors_edit.read(path)
        return {key: payload[slice(*entry["data_offsets"])]
                for key, entry in header.items() if key != "__metadata__"}
    expect(tensors(one) == tensors(three), "--augment: 1 and 3 devices differ")
    expect(tensors(one) != tensors(plain), "--augment changed nothing")
    print("augment: the same draws on 1 and 3 devices (invariant mode), and they count")


def check_interrupt(tandem, data, work):
    checkpoint = os.path.join(work, "interrupted.safetensors")
    process = subprocess.Popen(
        [tandem, "train", "--data", data, "--epochs", "1000", "--batch-size", "16",
         "--devices", "cpu:0,cpu:1", "--checkpoint", checkpoint],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    deadline = time.time() + 60
    while not os.path.exists(checkpoint) and time.time() < deadline:
        time.sleep(0.1)  # wait for the first epoch's checkpoint
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    expect(process.returncode == 128 + signal.SIGINT, (process.returncode, out, err))
    expect("stopped by SIGINT" in out and f"checkpoint: {checkpoint}" in out, out)
    result = run(tandem, "eval", "--checkpoint", checkpoint, "--data", data)
    expect("test_accuracy" in result.stdout, result.stdout)
    print("SIGINT: clean stop with exit 130 and a checkpoint that evaluates")


def check_metrics(tandem, data, work):
    metrics = os.path.join(work, "metrics.jsonl")
    run(tandem, "train", "--data", data, "--epochs", "2", "--batch-size", "64",
        "--metrics", metrics)
    lines = [json.loads(line) for line in open(metrics)]
    expect([m["epoch"] for m in lines] == [1, 2], lines)
    for m in lines:
        for key in ("train_loss", "test_loss", "test_accuracy", "samples_per_second",
                    "seconds"):
            expect(isinstance(m[key], (int, float)), (key, m))
    expect(lines[1]["test_loss"] < lines[0]["test_loss"], lines)  # it learns
    print("metrics: one JSON object per epoch")
    # Per-step records every 2 steps, between the epochs' records, over two
    # devices: the steps' loss, rate, each device's busy fraction, shares.
    run(tandem, "train", "--data", data, "--epochs", "2", "--batch-size", "64",
        "--devices", "cpu:0,cpu:1", "--balance", "3,1", "--metrics", metrics,
        "--metrics-every", "2")
    lines = [json.loads(line) for line in open(metrics)]
    steps = [m for m in lines if "step" in m]
    epochs = [m for m in lines if "test_loss" in m]
    expect([m["epoch"] for m in epochs] == [1, 2], lines)
    per_epoch = epochs[0]["steps"]
    expect([m["step"] for m in steps] == list(range(2, 2 * per_epoch + 1, 2)), lines)
    for m in steps:
        expect(m["shares"] == [0.75, 0.25], m)
        expect(len(m["busy"]) == 2 and all(0 < b <= 1.05 for b in m["busy"]), m)
        expect(m["train_loss"] > 0 and m["samples_per_second"] > 0, m)
        expect("test_loss" not in m, m)
    print("metrics: --metrics-every 2 adds per-step records with busy fractions and shares")


def check_errors(tandem, data, work):
    for args in (["train", "--no-such-flag", "1"], ["train", "--epochs", "x"],
                 ["train", "--model", "resnet9000"], ["eval"], ["bogus"]):
        err = run(tandem, *args, expect=2).stderr
        expect(err.startswith("error: "), (args, err))
    err = run(tandem, "train", "--data", os.path.join(work, "nothing"), expect=1).stderr
    expect("dataset-fashion-mnist" in err, err)
    corrupt = os.path.join(work, "corrupt.safetensors")
    with open(corrupt, "wb") as f:
        f.write(b"\x10\x00\x00\x00\x00\x00\x00\x00{\"a\": 1}")
    err = run(tandem, "eval", "--checkpoint", corrupt, "--data", data, expect=1).stderr
    expect(err.startswith("error: ") and "corrupt.safetensors" in err, err)
    print("errors: usage exits 2, missing data names the package, corrupt files fail")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        data = dataset_in(work)
        check_exact_resume(tandem, data, work, "mlp", "cpu:0,cpu:1", 14)
        check_exact_resume(tandem, data, work, "cnn", "cpu:0", 6)
        check_exact_resume(tandem, data, work, "cnn", "cpu:0,cpu:1", 6)
        check_exact_resume(tandem, data, work, "resnet", "cpu:0,cpu:1", 4)
        check_exact_resume(tandem, data, work, "cnn", "cpu:0,cpu:1", 6, ["--augment"])
        check_augment_is_cut_free(tandem, data, work)
        check_interrupt(tandem, data, work)
        check_metrics(tandem, data, work)
        check_errors(tandem, data, work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
