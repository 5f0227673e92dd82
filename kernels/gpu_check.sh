#!/usr/bin/env bash
# One-command GPU check (issues 5, 19). Run from anywhere on a machine with an NVIDIA GPU and a CUDA-enabled jax
# (jax 0.10.2 + the jax-cuda plugin) in the active Python environment:
#     bash kernels/gpu_check.sh
# 1. compiled (Triton) correctness of forward + VJP of both kernels vs their XLA references (shapes the blocks do
#    not divide; ~1 min);
# 2. the harness's GPU cases (`python -m experiments bench kernels`: Pallas vs XLA, each implementation in its own
#    process, 5 alternating pairs; ~5 min on an H200), which rewrites the `kernels` section of docs/benchmarks.md
#    and docs/benchmarks/kernels.png;
# 3. SO(3) exp/log on the GPU vs SciPy (host CPU) and jaxlie (same GPU), 5 pairs, not written to the docs (~2 min).
# If $OUT is set, the results are copied there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
"$PY" - <<'PYEOF'
import jax, sys
print("jax", jax.__version__, "backend", jax.default_backend(), jax.devices())
if jax.default_backend() != "gpu":
    sys.exit("gpu_check.sh: no GPU backend in this Python environment (need a CUDA-enabled jaxlib)")
PYEOF
nvidia-smi --query-gpu=name,memory.total,clocks.max.memory --format=csv 2>/dev/null || true
status=0
timeout 300 "$PY" -m experiments.bench_kernels --check || status=$?
timeout 480 "$PY" -m experiments bench kernels || status=$?
timeout 240 "$PY" -m experiments bench se3 --no-docs --cases "exp float32" "log float32" || status=$?
if [ -n "${OUT:-}" ]; then
    mkdir -p "$OUT"
    cp docs/benchmarks.md docs/benchmarks/kernels.png "$OUT/" 2>/dev/null || true
    cp results/bench_kernels/bench.json "$OUT/bench_kernels.json" 2>/dev/null || true
    cp results/bench_se3/bench.json "$OUT/bench_se3_gpu.json" 2>/dev/null || true
fi
exit $status
