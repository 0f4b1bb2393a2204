"""Builds libtorch_step.cpp, LibTorch's side of the comparisons, on demand.

bench/vs_pytorch/run and layers_vs_pytorch.py call build() before their
LibTorch runs: it compiles the program when it is missing or older than its
source (about 20 s), and says why it cannot when libtorch-dev is not
installed (bench/vs_pytorch/install-deps.sh) or the compiler fails.

    import libtorch_build
    why = libtorch_build.build(build_dir, say)   # None when the binary is ready
    command = [libtorch_build.binary(build_dir), "--model", "lstm", ...]
"""

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUILD_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "build-vs-pytorch")
LIBTORCH_INCLUDE = "/usr/include/torch/csrc/api/include"


def binary(build_dir):
    return os.path.join(build_dir, "libtorch_step")


def build(build_dir, say):
    """Builds libtorch_step when it is missing or older than its source; returns why
    it cannot be built, or None. `say` prints a progress line."""
    source = os.path.join(HERE, "libtorch_step.cpp")
    target = binary(build_dir)
    if not os.path.exists(os.path.join(LIBTORCH_INCLUDE, "torch", "torch.h")):
        return ("LibTorch's C++ headers are not installed (libtorch-dev): run "
                "bench/vs_pytorch/install-deps.sh")
    if os.path.exists(target) and os.path.getmtime(target) >= os.path.getmtime(source):
        return None
    os.makedirs(build_dir, exist_ok=True)
    command = ["g++", "-O2", "-std=c++17", f"-I{LIBTORCH_INCLUDE}", source, "-o", target,
               "-ltorch", "-ltorch_cpu", "-lc10"]
    say(f"building {target} (about 20 s): {' '.join(command)}")
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        return "building libtorch_step.cpp failed:\n" + done.stderr[-2000:]
    return None
