"""Runs `tandem` with bad flags as a user might type them and checks that
each is refused as bad usage, before any work starts: exit 2 and
"error: ..." on stderr naming the flag (and for a choice the values it
allows). Also that the global --threads works before and after the
command, that every command has --help, and that `tandem --version`
prints the project's version (CMake's, given as VERSION).

Usage: check_cli_flags.py PATH_TO_TANDEM VERSION"""
import subprocess
import sys

# (arguments, what stderr must contain, what it must not)
REFUSED = [
    # A flag where a value belongs is not taken as the value.
    (["train", "--lr", "--epochs", "3"], ["--lr: needs a value", "--epochs"], []),
    (["train", "--data", "--epochs", "3"], ["--data: needs a value"], []),
    (["train", "--epochs"], ["--epochs: needs a value"], []),
    # An unknown flag is called one, last on the line too.
    (["train", "--bogus"], ["unknown flag --bogus"], ["needs a value"]),
    (["train", "--no-such-flag", "1"], ["unknown flag --no-such-flag"], []),
    (["devices", "--bogus=1"], ["unknown flag --bogus"], []),
    (["bogus"], ["unknown command 'bogus'"], []),
    # Device lists: no empty entry at either end.
    (["train", "--devices", "cpu:0,"], ["--devices", "empty entry"], []),
    (["train", "--devices", ",cpu:0"], ["--devices", "empty entry"], []),
    (["tutorial", "--devices", "cpu:0,,cpu:1"], ["--devices", "empty entry"], []),
    # Choices name the flag and what it allows.
    (["train", "--model", "resnet9000"], ["--model", "resnet9000", "mlp|cnn|resnet|lstm-lm|dcgan"], []),
    (["bench", "--model", "resnet9000"], ["--model", "tiny|mlp|cnn|resnet"], []),
    (["train", "--optimizer", "rmsprop"], ["--optimizer", "sgd|adam"], []),
    (["train", "--lr-schedule", "linear"], ["--lr-schedule", "cosine|constant"], []),
    (["train", "--dtype", "float16"], ["--dtype", "float32|float64"], []),
    # Numbers: whole where they count, within their range.
    (["train", "--workers", "100000"], ["--workers", "1024"], []),
    (["train", "--workers", "-1"], ["--workers"], []),
    (["train", "--epochs", "0"], ["--epochs", ">= 1"], []),
    (["train", "--epochs", "x"], ["--epochs"], []),
    (["train", "--epochs", "010"], ["--epochs"], []),
    (["train", "--batch-size", "0"], ["--batch-size", ">= 1"], []),
    (["train", "--lr", "-0.1"], ["--lr", "> 0"], []),
    (["train", "--lr", "nan"], ["--lr"], []),
    (["train", "--weight-decay", "-0.1"], ["--weight-decay", ">= 0"], []),
    (["train", "--weight-decay", "inf"], ["--weight-decay"], []),
    (["train", "--seed", "-1"], ["--seed"], []),
    (["demo", "--epochs", "0"], ["--epochs"], []),
    (["--threads", "0", "devices"], ["--threads"], []),
    (["devices", "--threads", "100000"], ["--threads", "1024"], []),
    (["eval"], ["--checkpoint is required"], []),
]

COMMANDS = ["demo", "devices", "tutorial", "train", "eval", "bench"]

failures = []


def expect(condition, what):
    """Records a failed check; main() exits 1 after all ran (an explicit
    exit, which `python3 -O` keeps: it strips assert statements)."""
    if not condition:
        failures.append(what)
        print(f"FAILED: {what}", file=sys.stderr)


def run(tandem, args):
    try:
        return subprocess.run([tandem, *args], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(args, None, "", "(still running after 60 s)")


def check_refusals(tandem):
    for args, wanted, unwanted in REFUSED:
        result = run(tandem, args)
        line = f"tandem {' '.join(args)}: exit {result.returncode}, stderr {result.stderr!r}"
        expect(result.returncode == 2, line + " (expected exit 2)")
        expect(result.stderr.startswith("error: "), line + " (expected 'error: ...')")
        for text in wanted:
            expect(text in result.stderr, line + f" (expected {text!r})")
        for text in unwanted:
            expect(text not in result.stderr, line + f" (unexpected {text!r})")
    print(f"refusals: {len(REFUSED)} bad command lines exit 2 naming the flag")


def check_accepted(tandem):
    for args in (["--threads", "1", "devices"], ["devices", "--threads", "1"],
                 ["--threads=1", "devices"], ["devices", "--threads", "3", "--threads", "1"]):
        result = run(tandem, args)
        expect(result.returncode == 0 and "core budget: 1 of" in result.stdout,
               f"tandem {' '.join(args)}: exit {result.returncode}, {result.stdout!r}, "
               f"{result.stderr!r}")
    for command in COMMANDS:
        result = run(tandem, [command, "--help"])
        expect(result.returncode == 0 and f"Usage: tandem {command}" in result.stdout,
               f"tandem {command} --help: exit {result.returncode}, {result.stdout!r}")
    print("accepted: --threads before and after the command, --help for every command")


def check_version(tandem, version):
    for args in (["--version"], ["version"]):
        result = run(tandem, args)
        expect(result.returncode == 0 and result.stdout == f"tandem {version}\n",
               f"tandem {' '.join(args)}: exit {result.returncode}, {result.stdout!r} "
               f"(expected 'tandem {version}')")
    print(f"version: tandem {version}")


def main(tandem, version):
    check_refusals(tandem)
    check_accepted(tandem)
    check_version(tandem, version)
    if failures:
        sys.exit(f"check_cli_flags: {len(failures)} checks failed")
    print("check_cli_flags: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
