#!/usr/bin/env bash
# Installs the Debian packages that only bench/vs_pytorch needs, on top of
# scripts/install-deps.sh (which brings python3-torch, python3-numpy, g++):
#   libtorch-dev         LibTorch C++ headers, for the libtorch_step.cpp rows
#   libopenblas0-openmp  the OpenMP OpenBLAS variant, PyTorch's best 2-thread
#                        configuration (used per process via LD_LIBRARY_PATH;
#                        the system-wide libblas.so.3 alternative is untouched
#                        because openblas-pthread keeps the higher priority)
# Idempotent: prints nothing and touches nothing when all are present;
# otherwise runs `apt-get update` once and installs only what is missing.
#
#   bench/vs_pytorch/install-deps.sh
set -euo pipefail

packages=(libtorch-dev libopenblas0-openmp)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0

echo "vs_pytorch/install-deps: installing ${missing[*]}"
sudo=()
((EUID == 0)) || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "vs_pytorch/install-deps: done"
