"""Runs `tandem tutorial` over 1, 2, 3 and 8 CPU devices and checks the
per-replica batch sizes against the seed tutorial's printouts:
2 -> 15+15 three times, then 5+5; 3 -> 10+10+10, then 4+4+2;
8 -> 4x7+2, then 2x5. Replicas print concurrently, so within a batch the
sizes are compared as a multiset. Usage: check_tutorial.py PATH_TO_TANDEM"""
import re
import subprocess
import sys

EXPECTED = {
    1: [[30], [30], [30], [10]],
    2: [[15, 15]] * 3 + [[5, 5]],
    3: [[10, 10, 10]] * 3 + [[4, 4, 2]],
    8: [[4] * 7 + [2]] * 3 + [[2] * 5],
}


def expect(condition, what="check failed"):
    """Fails the run with `what` unless `condition` holds: an explicit exit,
    which `python3 -O` keeps (it strips assert statements)."""
    if not condition:
        sys.exit(f"FAILED: {what}")


def batches(output):
    """Groups the 'In Model' row counts by the 'Outside' line ending each batch."""
    result, current = [], []
    for line in output.splitlines():
        inner = re.match(r"\tIn Model: input size \[(\d+), 5\] output size \[(\d+), 2\]$", line)
        outer = re.match(r"Outside: input size \[(\d+), 5\] output_size \[(\d+), 2\]$", line)
        if inner:
            expect(inner.group(1) == inner.group(2), line)
            current.append(int(inner.group(1)))
        elif outer:
            expect(outer.group(1) == outer.group(2), line)
            expect(sum(current) == int(outer.group(1)), (line, current))
            result.append(sorted(current, reverse=True))
            current = []
        else:
            expect(not line or line.startswith("Let's use"), "unexpected line: " + repr(line))
    return result


def main(tandem):
    for n, want in EXPECTED.items():
        devices = ",".join(f"cpu:{i}" for i in range(n))
        run = subprocess.run([tandem, "tutorial", "--devices", devices],
                             capture_output=True, text=True, timeout=60, check=True)
        got = batches(run.stdout)
        expect(got == want, f"{n} devices: got {got}, want {want}")
        expect(("Let's use %d devices!" % n in run.stdout) == (n > 1), run.stdout)
        print(f"{n} devices: per-replica sizes {got} as in the seed")
    bad = subprocess.run([tandem, "tutorial", "--devices", "cpu:0,gpu:1"],
                         capture_output=True, text=True, timeout=60)
    expect(bad.returncode == 2 and "error:" in bad.stderr, (bad.returncode, bad.stderr))
    print("tutorial output matches the seed")


if __name__ == "__main__":
    main(sys.argv[1])
