#!/usr/bin/env bash
# Installs every Debian package that tandem's build, tests, benchmarks and
# main job need. Idempotent: when everything is present it prints nothing
# and touches nothing; otherwise it runs `apt-get update` once and installs
# only what is missing.
set -euo pipefail

packages=(
  g++ cmake ninja-build make pkg-config ccache  # the build
  libopenblas-dev                       # BLAS for CPU matrix products
  zlib1g-dev                            # gzip'd datasets
  libopenmpi-dev openmpi-bin            # MPI for multi-process training (tandem::distributed)
  libgtest-dev libbenchmark-dev         # tests and micro-benchmarks
  libcli11-dev                          # the tandem command's flags
  nlohmann-json3-dev                    # tandem plot reads Chrome traces
  python3-torch python3-numpy           # PyTorch reference values and benchmarks
  clang-format                          # the style check
  clang-14 libclang-rt-14-dev           # libFuzzer for the file-reader fuzz targets
  dataset-fashion-mnist                 # the main job's data
  bible-kjv                             # examples/lstm_lm_bible: the King James Bible
  iproute2 util-linux                   # tests/multihost: network namespaces (ip netns, unshare)
  chromium python3-pil                  # tests/tools/check_plot.py: screenshot the plot, read the PNG
  librsvg2-bin                          # tandem plot --out FILE.png (rsvg-convert)
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
