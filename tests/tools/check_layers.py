"""Checks that the layer order of src/layers.txt holds, both ways it is kept:
the lint (tools/lint/check_layers.py) passes on the tree and fails, naming
the line, once an upward include is planted in a copy of it; and the build's
per-layer include roots (build/src/layer_includes/<layer>/) let a layer's
file include what lies below it and refuse what lies above.
Usage: check_layers.py SOURCE_DIR LAYER_INCLUDES_DIR CXX"""
import os
import shutil
import subprocess
import sys
import tempfile

failures = []


def expect(condition, what, detail=""):
    if not condition:
        failures.append(what + (":\n" + detail if detail else ""))


def lint(root):
    script = os.path.join(SOURCE, "tools", "lint", "check_layers.py")
    return subprocess.run([sys.executable, script, "--root", root, "--quiet"],
                          capture_output=True, text=True, timeout=120)


def compiles(layer, header):
    run = subprocess.run([CXX, "-std=c++20", "-fsyntax-only", "-x", "c++", "-",
                          "-I", os.path.join(LAYER_INCLUDES, layer)],
                         input=f'#include "{header}"\n', capture_output=True, text=True,
                         timeout=120)
    return run.returncode == 0, run.stderr


if len(sys.argv) != 4:
    sys.exit(__doc__)
SOURCE, LAYER_INCLUDES, CXX = sys.argv[1:]

# The tree as it is.
run = lint(SOURCE)
expect(run.returncode == 0, "the lint fails on the tree itself", run.stdout + run.stderr)

# A copy with core including an op header, and the graph the engine's.
with tempfile.TemporaryDirectory() as scratch:
    for top in ("src", "include"):
        shutil.copytree(os.path.join(SOURCE, top), os.path.join(scratch, top), symlinks=True)
    planted = {os.path.join("src", "core", "tensor.cpp"): '#include "tandem/ops/shape.h"\n',
               os.path.join("include", "tandem", "graph", "node.h"):
               '#include "tandem/autograd/engine.h"\n'}
    for rel, line in planted.items():
        with open(os.path.join(scratch, rel), "a") as f:
            f.write(line)
    run = lint(scratch)
    expect(run.returncode == 1, "the lint accepts a planted upward include",
           run.stdout + run.stderr)
    expect("src/core/tensor.cpp:" in run.stdout and "(layer ops), above its own layer (core)"
           in run.stdout, "the lint does not name core's planted include", run.stdout)
    expect("include/tandem/graph/node.h:" in run.stdout and
           "(layer autograd), above its own layer (graph)" in run.stdout,
           "the lint does not name the graph's planted include", run.stdout)

# The build: each layer sees its own headers and those below, nothing above.
for layer, header, visible in [("core", "tandem/core/tensor.h", True),
                               ("core", "tandem/ops/shape.h", False),
                               ("core", "backend/dispatch.h", False),
                               ("graph", "tandem/graph/node.h", True),
                               ("graph", "tandem/ops/factory.h", False),
                               ("ops", "tandem/graph/node.h", True),
                               ("ops", "backend/dispatch.h", True),
                               ("ops", "tandem/autograd/engine.h", False),
                               ("nn", "tandem/autograd/engine.h", True),
                               ("nn", "tandem/parallel/data_parallel.h", False),
                               ("distributed", "tandem/parallel/data_parallel.h", True),
                               ("distributed", "tandem/io/checkpoint.h", False)]:
    ok, errors = compiles(layer, header)
    if visible:
        expect(ok, f"{layer} cannot include {header}, which lies at or below it", errors)
    else:
        expect(not ok and "No such file" in errors,
               f"{layer} can include {header}, which lies above it", errors)

if failures:
    print("check_layers: FAILED\n- " + "\n- ".join(failures))
    sys.exit(1)
print("check_layers: the lint and the build both keep the layer order")
