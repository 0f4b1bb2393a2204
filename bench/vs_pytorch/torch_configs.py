"""The named thread and BLAS configurations PyTorch (and LibTorch) can run in.

Debian's python3-torch 1.13 uses OpenMP for its own parallel loops and
whichever OpenBLAS variant libblas.so.3 resolves to for matrix products
(openblas-pthread by default). Left alone at 2 threads, libgomp's spinning
workers and OpenBLAS's own pthreads fight over the 2 cores and a step runs
3x slower (shared/research/baselines.md, section 4). These configurations
are the ways out; bench/vs_pytorch/run measures each once and keeps the
fastest for every model and thread count.

Every configuration but "default" also names OpenBLAS's kernels
(OPENBLAS_CORETYPE) when the run gives them in TANDEM_BENCH_OPENBLAS_KERNELS:
bench/vs_pytorch/run passes the kernels tandem uses (`tandem devices`), so
both sides multiply with the same ones. OpenBLAS 0.3.21 picks kernels by CPU
model and takes CPUs newer than itself (Emerald Rapids) for a Prescott, which
makes PyTorch's GEMMs 4x slower (src/backend/cpu/blas_setup.cpp, Note
[OpenBLAS kernels]).

A configuration is an environment: the variables below are removed from the
inherited environment, then the configuration's own are set. The dynamic
loader reads LD_LIBRARY_PATH only when a process starts, so a script applies
a configuration by re-executing itself (apply) before it imports torch.

    from torch_configs import CONFIGS, environment, apply
"""

import os
import shutil
import sys

OPENBLAS_OPENMP_DIR = "/usr/lib/x86_64-linux-gnu/openblas-openmp"

# One-thread runs of every framework run on core 0: a VM's cores can differ
# in speed (on this project's, core 1 ran the same step 25% slower than core 0
# on 2026-12-01), and an unpinned run lands on either.
ONE_CORE = ["taskset", "-c", "0"] if shutil.which("taskset") else []

# Every variable a configuration decides; none is inherited.
CONTROLLED = (
    "LD_LIBRARY_PATH",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "OMP_WAIT_POLICY",
    "OPENBLAS_CORETYPE",
    "GOMP_SPINCOUNT",
    "MKL_NUM_THREADS",
)

# name -> (what it is, function from the thread count to its variables)
CONFIGS = {
    "default": (
        "Debian's out-of-the-box setup: openblas-pthread with as many BLAS "
        "threads as cores, whatever set_num_threads says",
        lambda threads: {},
    ),
    "pthread-blas": (
        "openblas-pthread, OPENBLAS_NUM_THREADS=N",
        lambda threads: {"OPENBLAS_NUM_THREADS": str(threads)},
    ),
    "pthread-blas-passive": (
        "openblas-pthread, OPENBLAS_NUM_THREADS=N, OMP_WAIT_POLICY=PASSIVE",
        lambda threads: {"OPENBLAS_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "PASSIVE"},
    ),
    "openmp-blas": (
        "openblas-openmp variant (LD_LIBRARY_PATH), OMP_NUM_THREADS=N",
        lambda threads: {"LD_LIBRARY_PATH": OPENBLAS_OPENMP_DIR, "OMP_NUM_THREADS": str(threads)},
    ),
    "openmp-blas-passive": (
        "openblas-openmp variant (LD_LIBRARY_PATH), OMP_NUM_THREADS=N, OMP_WAIT_POLICY=PASSIVE",
        lambda threads: {
            "LD_LIBRARY_PATH": OPENBLAS_OPENMP_DIR,
            "OMP_NUM_THREADS": str(threads),
            "OMP_WAIT_POLICY": "PASSIVE",
        },
    ),
}

# The candidates worth measuring for a thread count. At 1 thread only the
# configurations that really use one core qualify ("default" runs 2 BLAS
# threads even under set_num_threads(1)).
CANDIDATES = {
    1: ["pthread-blas", "openmp-blas"],
    2: ["default", "pthread-blas-passive", "openmp-blas", "openmp-blas-passive"],
}


def available(name):
    """Whether the configuration can run here (the openmp variant may be missing)."""
    if name.startswith("openmp-blas"):
        return os.path.exists(os.path.join(OPENBLAS_OPENMP_DIR, "libblas.so.3"))
    return True


def candidates(threads):
    names = CANDIDATES.get(threads, ["pthread-blas", "openmp-blas"])
    return [name for name in names if available(name)]


def environment(name, threads, base=None):
    """The whole environment a process runs under in configuration `name`."""
    if name not in CONFIGS:
        raise SystemExit(f"unknown configuration '{name}' (expected {', '.join(CONFIGS)})")
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in CONTROLLED}
    env.update(CONFIGS[name][1](threads))
    kernels = env.get("TANDEM_BENCH_OPENBLAS_KERNELS")
    if name != "default" and kernels:
        env["OPENBLAS_CORETYPE"] = kernels
    return env


def apply(name, threads):
    """Re-executes this script under configuration `name` unless it already runs so."""
    env = environment(name, threads)
    if env != dict(os.environ):
        sys.stdout.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def loaded_blas():
    """The BLAS libraries this process has mapped, e.g. 'openblas-openmp', and
    OpenBLAS's own report of its threading, thread count and kernels when it
    is loaded."""
    paths = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            fields = line.split()
            if len(fields) >= 6 and ("blas" in fields[5] or "blis" in fields[5]):
                paths.add(fields[5])
    names = sorted({os.path.basename(os.path.dirname(p)) for p in paths})
    info = {"blas": ",".join(names) or "none"}
    for path in paths:
        if "libopenblas" in os.path.basename(path):
            import ctypes

            lib = ctypes.CDLL(path)
            info["blas_parallel"] = ["serial", "pthread", "openmp"][lib.openblas_get_parallel()]
            info["blas_threads"] = lib.openblas_get_num_threads()
            lib.openblas_get_corename.restype = ctypes.c_char_p
            info["blas_kernels"] = lib.openblas_get_corename().decode()
            break
    return info
