#!/usr/bin/env python3
"""Checks every #include in src/ and include/tandem/ against the layer order.

src/layers.txt lists tandem's layers bottom up. A file belongs to the layer
named by the first folder of its path (src/<layer>/..., include/tandem/
<layer>/...); it may include headers of its own layer and of the layers
listed before it. This prints the include edges between layers, one line
per pair with a count, then every include that runs up, and exits 1 if there
is one. The build enforces the same order (src/CMakeLists.txt gives each
layer an include root with only the headers below it); this check names the
offending line in one pass over the tree, and runs in `make lint`.

    tools/lint/check_layers.py [--root DIR] [--quiet]
"""
import argparse
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def read_layers(root):
    path = os.path.join(root, "src", "layers.txt")
    try:
        with open(path) as f:
            names = [line.split()[0] for line in f if line.strip() and not line.startswith("#")]
    except OSError as e:
        sys.exit(f"check_layers: cannot read {path}: {e.strerror}")
    if len(set(names)) != len(names):
        sys.exit(f"check_layers: {path} names a layer twice")
    return {name: rank for rank, name in enumerate(names)}


def layer_of_path(rel, layers):
    """The layer of a file given by its path from the root, or None."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        name = parts[1]
    elif parts[:2] == ["include", "tandem"] and len(parts) > 3:
        name = parts[2]
    else:
        return None
    return name if name in layers else None


def layer_of_include(root, including_dir, bracket, target, layers):
    """The layer of an included header, or None for one outside tandem."""
    parts = target.split("/")
    if parts[0] == "tandem" and len(parts) > 2:
        return parts[1] if parts[1] in layers else None
    if bracket == '"':
        # Quoted includes are searched next to the including file first.
        beside = os.path.normpath(os.path.join(including_dir, target))
        if os.path.isfile(beside):
            return layer_of_path(os.path.relpath(beside, root), layers)
        if parts[0] in layers and len(parts) > 1:  # a private header: src/<layer>/...
            return parts[0]
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", ".."))
    parser.add_argument("--quiet", action="store_true", help="print only what runs up")
    args = parser.parse_args()
    root = os.path.abspath(args.root)
    layers = read_layers(root)

    edges = collections.Counter()
    upward = []
    for top in ("src", os.path.join("include", "tandem")):
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".cu", ".cuh")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root)
                own = layer_of_path(rel, layers)
                if own is None:
                    continue
                with open(path, errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        other = layer_of_include(root, folder, m.group(1), m.group(2), layers)
                        if other is None or other == own:
                            continue
                        edges[(own, other)] += 1
                        if layers[other] > layers[own]:
                            upward.append(f"{rel}:{number}: includes {m.group(2)} "
                                          f"(layer {other}), above its own layer ({own})")

    if not args.quiet:
        order = sorted(layers, key=layers.get)
        print("include edges between layers (bottom up: " + " < ".join(order) + "):")
        for (a, b), n in sorted(edges.items(), key=lambda e: (layers[e[0][0]], layers[e[0][1]])):
            mark = "  UP" if layers[b] > layers[a] else ""
            print(f"  {a:>12} -> {b:<12} {n:4}{mark}")
    if upward:
        print(f"check_layers: {len(upward)} include(s) run up the layer order:")
        for line in upward:
            print("  " + line)
        sys.exit(1)
    print("check_layers: no include runs up the layer order")
    sys.exit(0)


if __name__ == "__main__":
    main()
