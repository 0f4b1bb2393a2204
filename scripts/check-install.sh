#!/usr/bin/env bash
# Installs tandem from BUILD_DIR into a scratch prefix, then builds and runs
# tests/install/ — an outside project that uses find_package(tandem) and
# trains a Linear model — against it.
set -euo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$root/$build" --prefix "$prefix/usr" >/dev/null
cmake -S "$root/tests/install" -B "$prefix/app-build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix/usr" >/dev/null
cmake --build "$prefix/app-build" -j "$(nproc)" >/dev/null
"$prefix/app-build/train_linear"
echo "check-install: an outside project built and trained against the installed tandem"
