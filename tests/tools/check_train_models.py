"""Runs `tandem train --model lstm-lm` and `--model dcgan` as a user would,
on tiny data (a made-up bible of 11 books, a synthetic MNIST-format set),
and checks:

- lstm-lm: per-epoch validation loss and perplexity on the screen and in
  the metrics, the test perplexity at the end, the plateau schedule's lr in
  the checkpoint; a run stopped mid-epoch and resumed ends byte-identical
  to the straight run (weights, the LSTM state carried between segments,
  the schedule);
- dcgan: a PNG grid of samples per epoch in --samples, d_real and d_fake
  scores, exact resume mid-epoch;
- the flags these models cannot honour are refused naming the flag (exit 2),
  and so is a flag meant for them given to a classifier; tandem eval says
  what a language-model checkpoint is instead of failing on it.

Usage: check_train_models.py PATH_TO_TANDEM"""
import json
import os
import random
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_train import dataset_in, expect, read, run  # noqa: E402

BOOKS = ["Ge", "Ex", "Le", "Nu", "De", "Jos", "Jg", "Ru", "Sa", "Ki", "Ch", "Ezr"]
WORDS = ["and", "the", "lord", "said", "unto", "moses", "israel", "of", "land",
         "children", "god", "house", "thy", "his", "went", "came"]


def write_bible(path):
    """Twelve books of twenty verses in `bible`'s format, words from a small
    Markov chain (so there is something to learn), with punctuation."""
    rng = random.Random(11)
    with open(path, "w") as f:
        for book in BOOKS:
            for verse in range(1, 21):
                word = rng.randrange(len(WORDS))
                text = []
                for _ in range(8 + rng.randrange(6)):
                    text.append(WORDS[word])
                    word = (word + 1 + rng.randrange(3)) % len(WORDS)
                f.write(f"{book}1:{verse} {' '.join(text).capitalize()}.\n")


def metrics_of(path):
    return [json.loads(line) for line in open(path)]


def check_exact_resume(tandem, work, model, args, steps, stop_at):
    """`steps` steps straight, and `stop_at` steps, a stop, then --resume
    alone up to `steps`: the two checkpoints must be byte-identical.
    Returns the straight run's checkpoint."""
    straight, half, resumed = (os.path.join(work, f"{model}-{name}.safetensors")
                               for name in ("straight", "half", "resumed"))
    run(tandem, "train", *args, "--max-steps", str(steps), "--checkpoint", straight)
    run(tandem, "train", *args, "--max-steps", str(stop_at), "--checkpoint", half)
    run(tandem, "train", "--resume", half, "--max-steps", str(steps),
        "--checkpoint", resumed)
    expect(read(straight) == read(resumed), f"{model}: resumed run differs from straight")
    print(f"{model}: stopped mid-epoch and resumed, byte-identical to the straight run")
    return straight


def check_language_model(tandem, work):
    bible = os.path.join(work, "bible.txt")
    write_bible(bible)
    metrics = os.path.join(work, "lm.jsonl")
    checkpoint = os.path.join(work, "lm.safetensors")
    common = ["--model", "lstm-lm", "--data", bible, "--batch-size", "4", "--seed", "5"]
    out = run(tandem, "train", *common, "--devices", "cpu:0,cpu:1", "--epochs", "2",
              "--metrics", metrics, "--checkpoint", checkpoint).stdout
    expect("training lstm-lm" in out and "sgd lr 20 (plateau)" in out, out)
    expect(out.count("valid_ppl") == 2 and "test ppl" in out, out)
    lines = metrics_of(metrics)
    expect([m["epoch"] for m in lines] == [1, 2], lines)
    for m in lines:
        for key in ("train_loss", "valid_loss", "valid_ppl", "samples_per_second"):
            expect(isinstance(m[key], (int, float)), (key, m))
        expect(abs(m["valid_ppl"] - 2.718281828 ** m["valid_loss"]) < 1e-3 * m["valid_ppl"],
               m)
    expect(lines[1]["valid_loss"] < lines[0]["valid_loss"], lines)  # it learns
    print("lstm-lm: validation perplexity per epoch, test perplexity at the end")

    # One device, so that dropout draws its masks in one order.
    straight = check_exact_resume(tandem, work, "lstm-lm",
                                  common + ["--devices", "cpu:0", "--epochs", "2"], 20, 7)
    err = run(tandem, "eval", "--checkpoint", straight, expect=2).stderr
    expect("lstm-lm" in err and "classifiers" in err, err)


def check_gan(tandem, work):
    data = dataset_in(work)
    samples = os.path.join(work, "samples")
    os.mkdir(samples)
    metrics = os.path.join(work, "gan.jsonl")
    common = ["--model", "dcgan", "--data", data, "--batch-size", "32", "--seed", "2",
              "--samples", samples]
    out = run(tandem, "train", *common, "--devices", "cpu:0,cpu:1", "--epochs", "1",
              "--metrics", metrics).stdout
    expect("training dcgan" in out and "adam lr 0.0002 (constant)" in out, out)
    png = os.path.join(samples, "dcgan-epoch-1.png")
    expect(os.path.exists(png) and read(png)[:8] == b"\x89PNG\r\n\x1a\n", png)
    (m,) = metrics_of(metrics)
    expect(0 < m["d_real"] < 1 and 0 < m["d_fake"] < 1, m)
    print("dcgan: a PNG grid of samples per epoch, d_real and d_fake scores")

    check_exact_resume(tandem, work, "dcgan",
                       common + ["--devices", "cpu:0", "--epochs", "1"], 6, 3)
    return data


def check_refusals(tandem, data, work):
    bible = os.path.join(work, "bible.txt")
    for args, named in (
            (["--model", "lstm-lm", "--data", bible, "--devices", "cpu:0,cpu:1",
              "--balance", "3,1"], "--balance"),
            (["--model", "lstm-lm", "--data", bible, "--invariant"], "invariant"),
            (["--model", "lstm-lm", "--data", bible, "--workers", "2"], "--workers"),
            (["--model", "dcgan", "--data", data, "--optimizer", "sgd"], "adam"),
            (["--model", "mlp", "--data", data, "--samples", work], "--samples"),
            (["--model", "mlp", "--data", data, "--lr-schedule", "plateau"], "plateau")):
        err = run(tandem, "train", *args, expect=2).stderr
        expect(err.startswith("error: ") and named in err, (args, err))
    err = run(tandem, "train", "--model", "lstm-lm", "--data",
              os.path.join(work, "no-such-bible.txt"), expect=1).stderr
    expect("no-such-bible.txt" in err, err)
    print("refusals: flags a model cannot honour exit 2, naming the flag")


def main(argv):
    tandem = argv[1]
    with tempfile.TemporaryDirectory() as work:
        check_language_model(tandem, work)
        data = check_gan(tandem, work)
        check_refusals(tandem, data, work)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
