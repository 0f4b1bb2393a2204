#!/usr/bin/python3
"""Writes every golden file of the parity tests into OUTDIR.

    /usr/bin/python3 tests/reference/generate_all.py OUTDIR

Needs PyTorch (Debian's python3-torch, 1.13). Deterministic: fixed seeds,
one thread, so reruns write identical files. See README.md beside this file.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree clean
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import attention  # noqa: E402
import batch_norm  # noqa: E402
import conv_transpose  # noqa: E402
import libtorch_ports  # noqa: E402
import mlp  # noqa: E402
import nn_utils  # noqa: E402
import norms_pooling  # noqa: E402
import ops  # noqa: E402
import rnn  # noqa: E402
import schedulers  # noqa: E402

DTYPES = [(torch.float32, "float32"), (torch.float64, "float64")]


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} OUTDIR", file=sys.stderr)
        return 2
    outdir = argv[1]
    os.makedirs(outdir, exist_ok=True)
    torch.set_num_threads(1)
    for dtype, name in DTYPES:
        mlp.write_all(outdir, dtype, name)
        ops.write_all(outdir, dtype, name)
        batch_norm.write_all(outdir, dtype, name)
        conv_transpose.write_all(outdir, dtype, name)
        nn_utils.write_all(outdir, dtype, name)
        rnn.write_all(outdir, dtype, name)
        attention.write_all(outdir, dtype, name)
        norms_pooling.write_all(outdir, dtype, name)
    schedulers.write_all(outdir)
    libtorch_ports.write_all(outdir)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
