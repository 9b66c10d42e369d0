#!/usr/bin/env bash
# Times y = x W for x [M, K] and an f32 weight through transformer-runner
# (the default CPU pipeline: packed weights, target-derived tiles, THREADS
# OpenMP threads) and prints its median GFLOP/s beside PyTorch's on the same
# thread count, same shapes and layout, and the time ratio.
#
# Usage: bench/linear.sh [M K N [LAYOUT [REPEAT [THREADS [PIPELINE_OPTIONS [DTYPE]]]]]]
#   LAYOUT: in_out (W [K, N]) or out_in (W [N, K], nn.Linear);
#   PIPELINE_OPTIONS e.g. "pack-weights=0" or "cpu=znver3";
#   DTYPE: f32, bf16 or f16 (a half-precision model's linear: x converted to
#   DTYPE, W stored in DTYPE, y converted back to f32; the conversions are
#   timed too, torch does the same).
# Defaults: 512 768 3072 in_out 20 1 "" f32.
# For a whole comparison with onnxruntime see bench/peers/run.py.
set -euo pipefail
M=${1:-512} K=${2:-768} N=${3:-3072} LAYOUT=${4:-in_out} REPEAT=${5:-20}
THREADS=${6:-1} OPTS=${7:-} DTYPE=${8:-f32}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
runner="$build/bin/transformer-runner"
if [ "$LAYOUT" = out_in ]; then W="${N}x${K}"; else W="${K}x${N}"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$DTYPE" = f32 ]; then
cat > "$work/linear.mlir" <<MLIR
func.func @linear(%x: tensor<1x${M}x${K}xf32> {tfm.input = "x"},
                  %w: tensor<${W}xf32> {tfm.param = "w"})
    -> (tensor<1x${M}x${N}xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<${LAYOUT}>}
      : (tensor<1x${M}x${K}xf32>, tensor<${W}xf32>) -> tensor<1x${M}x${N}xf32>
  return %y : tensor<1x${M}x${N}xf32>
}
MLIR
else
cat > "$work/linear.mlir" <<MLIR
func.func @linear(%x: tensor<1x${M}x${K}xf32> {tfm.input = "x"},
                  %w: tensor<${W}x${DTYPE}> {tfm.param = "w"})
    -> (tensor<1x${M}x${N}xf32> {tfm.output = "y"}) {
  %xh = tfm.convert %x : (tensor<1x${M}x${K}xf32>) -> tensor<1x${M}x${K}x${DTYPE}>
  %yh = tfm.linear %xh, %w {layout = #tfm.layout<${LAYOUT}>}
      : (tensor<1x${M}x${K}x${DTYPE}>, tensor<${W}x${DTYPE}>) -> tensor<1x${M}x${N}x${DTYPE}>
  %y = tfm.convert %yh : (tensor<1x${M}x${N}x${DTYPE}>) -> tensor<1x${M}x${N}xf32>
  return %y : tensor<1x${M}x${N}xf32>
}
MLIR
fi
/usr/bin/python3 -c "import numpy as np; np.save('$work/x.npy', np.full((1, $M, $K), 0.01, np.float32))"
"$runner" "$work/linear.mlir" --random-weights 1 --input "x=$work/x.npy" \
  --repeat "$REPEAT" --threads "$THREADS" --pipeline-options="$OPTS" > "$work/tfm.txt"
# OpenBLAS 0.3.21 does not know some recent CPUs and falls back to an SSE3
# kernel; name a close model for it then (bench/peers/run.py does the same).
if ! grep -qE "avx512f" /proc/cpuinfo; then coretype=Haswell; else coretype=SkylakeX; fi
OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-$coretype} OPENBLAS_NUM_THREADS=$THREADS \
OMP_NUM_THREADS=$THREADS /usr/bin/python3 - "$work/tfm.txt" "$M" "$K" "$N" "$LAYOUT" "$REPEAT" "$THREADS" "$OPTS" "$DTYPE" <<'PY'
import re, statistics, sys, time
import torch
text = open(sys.argv[1]).read()
med = float(re.search(r"median ([0-9.e+-]+) ms", text).group(1)) / 1e3
m, k, n = map(int, sys.argv[2:5])
layout, repeat, threads = sys.argv[5], int(sys.argv[6]), int(sys.argv[7])
flops = 2 * m * k * n
dtype = sys.argv[9]
print(f"tfm   linear {m}x{k}x{n} {dtype} {layout} [{sys.argv[8] or 'default'}], "
      f"{threads} thread(s): median {med * 1e3:.2f} ms, {flops / med / 1e9:.1f} GFLOP/s")
torch.set_num_threads(threads)
x = torch.full((1, m, k), 0.01)
half = {"f32": None, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
w = torch.full((n, k) if layout == "out_in" else (k, n), 0.02, dtype=half or torch.float32)
cast = (lambda t: t) if half is None else (lambda t: t.to(half))
back = (lambda t: t) if half is None else (lambda t: t.float())
f = ((lambda: back(torch.nn.functional.linear(cast(x), w))) if layout == "out_in"
     else (lambda: back(cast(x) @ w)))
f()
times = []
for _ in range(repeat):
    t = time.perf_counter(); f(); times.append(time.perf_counter() - t)
tmed = statistics.median(times)
print(f"torch linear {m}x{k}x{n} {dtype} {layout}, {threads} thread(s): median "
      f"{tmed * 1e3:.2f} ms, {flops / tmed / 1e9:.1f} GFLOP/s; tfm/torch time {med / tmed:.2f}")
PY
