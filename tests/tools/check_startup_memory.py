"""Runs `tandem --help` from a CUDA build and checks that it starts small:
cuBLAS is not among the libraries loaded at start-up, and peak resident
memory stays under 64 MiB. Linked, cuBLAS alone took ~210 MiB in every
process (Note [Loading cuBLAS lazily] in src/backend/cuda/cublas_loader.cpp).
Usage: check_startup_memory.py PATH_TO_TANDEM"""
import os
import resource
import subprocess
import sys

LIMIT_MIB = 64


def expect(condition, what="check failed"):
    """Fails the run with `what` unless `condition` holds: an explicit exit,
    which `python3 -O` keeps (it strips assert statements)."""
    if not condition:
        sys.exit(f"FAILED: {what}")


def main(tandem):
    run = subprocess.run([tandem, "--help"], capture_output=True, text=True, timeout=60)
    expect(run.returncode == 0, run.stderr)
    # Linux reports a child's peak in KiB; this script's only child so far.
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    traced = subprocess.run([tandem, "--help"], capture_output=True, text=True, timeout=60,
                            env=dict(os.environ, LD_DEBUG="files"))
    loaded = [line.split("file=")[1].split()[0] for line in traced.stderr.splitlines()
              if "file=" in line and "needed by" in line]
    cublas = [name for name in loaded if name.startswith("libcublas")]
    expect(not cublas, f"tandem --help loads {', '.join(cublas)} at start-up")
    expect(peak_mib < LIMIT_MIB,
           f"tandem --help peaked at {peak_mib:.1f} MiB (limit {LIMIT_MIB})")
    print(f"check_startup_memory: ok ({peak_mib:.1f} MiB, {len(loaded)} libraries)")


if __name__ == "__main__":
    main(sys.argv[1])
