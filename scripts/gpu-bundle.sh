#!/usr/bin/env bash
# Builds, on this (GPU-less) machine, what scripts/gpu-check.sh runs on a GPU
# machine that cannot install packages, and packs it into one folder to carry
# there: the CUDA test binary, the tandem command line and the mixed-device
# example, built for sm_90 (+PTX), with OpenBLAS and the CUDA runtime linked
# statically and every other non-system library they need copied beside them
# (MPI's, mostly). cuDNN and cuBLAS are NOT copied: the GPU machine has them
# (its CUDA install, or PyTorch's nvidia/* wheels), and gpu-check.sh finds them.
# cuBLAS is not even linked (so ldd does not list it): tandem opens it with
# dlopen on its first cuBLAS call, by soname (src/backend/cuda/cublas_loader.cpp).
#
#   scripts/gpu-bundle.sh            # -> build-gpu/bundle/{bin,lib}
#   du -sh build-gpu/bundle          # must fit what travels (64 MiB)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
BUNDLE=$BUILD/bundle
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
                                         -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES="90-real;90-virtual" -DBLA_STATIC=ON \
  -DTANDEM_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$BUILD" -j "$(nproc)" --target cuda_tests distributed_tests tandem_cli \
  mixed_device_model

rm -rf "$BUNDLE"
mkdir -p "$BUNDLE/bin" "$BUNDLE/lib"
binaries=("$BUILD/tests/cuda_tests" "$BUILD/tests/distributed_tests" "$BUILD/tools/tandem/tandem"
          "$BUILD/examples/mixed_device_model")
for b in "${binaries[@]}"; do
  cp "$b" "$BUNDLE/bin/"
  strip "$BUNDLE/bin/$(basename "$b")"
done
# Everything they load but the C library, the compiler's runtime and the GPU
# libraries the other machine brings.
system='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|librt\.|libpthread\.|libstdc\+\+|libgcc_s|libcuda\.|libcublas|libcublasLt|libcudnn)'
for b in "$BUNDLE"/bin/*; do
  ldd "$b" | awk '$3 ~ /^\// {print $1, $3}' | while read -r name path; do
    [[ $name =~ $system ]] || cp -nL "$path" "$BUNDLE/lib/"
  done
done
# Open MPI loads its plugins at run time; the singleton start needs none of
# them to be found for tests that never call MPI.
du -sh "$BUNDLE"
