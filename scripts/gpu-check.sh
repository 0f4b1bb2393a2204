#!/usr/bin/env bash
# The GPU check of issue 6, for a machine with NVIDIA GPUs: the CUDA tests,
# DataParallel over every GPU, the mixed CPU/GPU model, and tandem's
# training step beside PyTorch's on the same GPU (MLP and CNN, batch 256 and
# 1024). Logs and a summary go to $OUT (default gpu-check-out/). Runs in
# well under 8 minutes.
#
# It runs what scripts/gpu-bundle.sh built and packed (build-gpu/bundle) when
# that is there; otherwise it builds here (needs cmake, nvcc and tandem's
# build dependencies).
#
#   scripts/gpu-bundle.sh                        # on the build machine
#   OUT=/tmp/out scripts/gpu-check.sh            # on the GPU machine
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-check-out}
BUNDLE=${BUNDLE:-build-gpu/bundle}
PYTHON=${PYTHON:-python3}
STEPS=${STEPS:-50}
mkdir -p "$OUT"
status=0
say() { echo "== $*" | tee -a "$OUT/summary.txt"; }

if [[ ! -x $BUNDLE/bin/cuda_tests ]]; then
  say "no bundle at $BUNDLE: building here"
  BUILD=build-gpu-here
  cmake -S . -B $BUILD -DCMAKE_BUILD_TYPE=Release -DTANDEM_CUDA=ON \
    -DCMAKE_CUDA_ARCHITECTURES=native -DTANDEM_BUILD_BENCH=OFF >"$OUT/build.log" 2>&1 &&
    cmake --build $BUILD -j "$(nproc)" --target cuda_tests distributed_tests tandem_cli mixed_device_model \
      >>"$OUT/build.log" 2>&1 || { say "build failed (see build.log)"; exit 1; }
  mkdir -p "$BUILD/bundle/bin"
  cp $BUILD/tests/cuda_tests $BUILD/tests/distributed_tests $BUILD/tools/tandem/tandem \
    $BUILD/examples/mixed_device_model "$BUILD/bundle/bin/"
  BUNDLE=$BUILD/bundle
fi

# cuBLAS and cuDNN: the CUDA install's, else PyTorch's wheels'. cuDNN is
# linked; cuBLAS is opened with dlopen (libcublas.so.<major>) on the first
# product on a GPU, so it is found through this LD_LIBRARY_PATH too.
libs=$BUNDLE/lib
for d in /usr/local/cuda/lib64 $("$PYTHON" - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    for root in nvidia.__path__:
        for lib in sorted(glob.glob(os.path.join(root, "*", "lib"))):
            print(lib)
except ImportError:
    pass
PY
); do
  [[ -d $d ]] && libs=$libs:$d
done
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
bin=$BUNDLE/bin

nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
say "devices"
"$bin/tandem" devices 2>&1 | tee -a "$OUT/summary.txt"
gpus=$("$bin/tandem" devices 2>/dev/null | grep -c '^cuda:')
((gpus > 0)) || { say "tandem sees no GPU"; exit 1; }

say "CUDA tests"
if timeout 240 "$bin/cuda_tests" --gtest_brief=1 >"$OUT/cuda_tests.log" 2>&1; then
  say "cuda_tests: passed ($(grep -c '^\[       OK' "$OUT/cuda_tests.log" || true) shown OK)"
else
  status=1
  say "cuda_tests: FAILED"
  grep -E '^\[  FAILED|Failure|error' "$OUT/cuda_tests.log" | head -60 | tee -a "$OUT/summary.txt"
fi
tail -3 "$OUT/cuda_tests.log" | tee -a "$OUT/summary.txt"

say "mixed-device model (embedding on the CPU, linear on cuda:0)"
timeout 60 "$bin/mixed_device_model" >"$OUT/mixed_device_model.log" 2>&1 ||
  { status=1; say "mixed_device_model: FAILED"; }
tail -5 "$OUT/mixed_device_model.log" | tee -a "$OUT/summary.txt"

# NCCL (never run on a GPU before): the collectives' tests, one rank per GPU
# (NCCL refuses two ranks on one GPU), and DDP steps on cuda:0 in one rank.
if command -v mpirun >/dev/null; then
  say "NCCL collectives and DDP on $gpus GPU(s)"
  timeout 120 mpirun -np "$gpus" --oversubscribe "$bin/distributed_tests" \
    --gtest_filter='Nccl*' >"$OUT/nccl_tests.log" 2>&1 ||
    { status=1; say "nccl tests: FAILED"; }
  tail -5 "$OUT/nccl_tests.log" | tee -a "$OUT/summary.txt"
  timeout 120 mpirun -np 1 "$bin/tandem" bench --model mlp \
    --devices cuda:0 --steps 20 >"$OUT/ddp_bench.log" 2>&1 ||
    { status=1; say "DDP bench on GPUs: FAILED"; }
  tail -3 "$OUT/ddp_bench.log" | tee -a "$OUT/summary.txt"
else
  say "no mpirun on this machine: NCCL not checked"
fi

# Side by side: tandem's step and PyTorch's, alternating, same model and batch.
say "training steps against PyTorch on cuda:0 (median ms; ratio < 1: tandem faster)"
all_gpus=$(seq -s, -f 'cuda:%g' 0 $((gpus - 1)))
: >"$OUT/bench.jsonl"
for model in mlp cnn; do
  for batch in 256 1024; do
    for round in 1 2; do
      timeout 60 "$bin/tandem" bench --model $model --batch-size $batch --devices cuda:0 \
        --steps "$STEPS" --warmup 10 >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err" || status=1
      timeout 120 "$PYTHON" bench/vs_pytorch/torch_step.py --model $model --batch-size $batch \
        --device cuda:0 --steps "$STEPS" --warmup 10 >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err" ||
        status=1
    done
  done
  if ((gpus > 1)); then
    timeout 60 "$bin/tandem" bench --model $model --batch-size 1024 --devices "$all_gpus" \
      --steps "$STEPS" --warmup 10 >>"$OUT/bench.jsonl" 2>>"$OUT/bench.err" || status=1
  fi
done
"$PYTHON" - "$OUT/bench.jsonl" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
best = {}
for r in rows:
    who = "pytorch" if "framework" in r else "tandem"
    key = (r["model"], r["batch_size"], r["devices"], who)
    if key not in best or r["median_ms"] < best[key]["median_ms"]:
        best[key] = r
print("| model | batch | devices | tandem ms | PyTorch ms | ratio | tandem MiB | PyTorch MiB |")
print("|---|---|---|---|---|---|---|---|")
for (model, batch, devices, who), r in sorted(best.items()):
    if who != "tandem":
        continue
    p = best.get((model, batch, devices, "pytorch"))
    pm = f"{p['median_ms']:.3f}" if p else "-"
    ratio = f"{r['median_ms'] / p['median_ms']:.2f}x" if p else "-"
    pmem = p.get("peak_gpu_mib", "-") if p else "-"
    print(f"| {model} | {batch} | {devices} | {r['median_ms']:.3f} | {pm} | {ratio} | "
          f"{r.get('peak_gpu_mib', '-')} | {pmem} |")
PY
[[ -s $OUT/bench.err ]] && { say "bench errors:"; head -20 "$OUT/bench.err" | tee -a "$OUT/summary.txt"; }
say "done, status $status"
exit $status
