#!/usr/bin/env bash
# Times y = x W for x [M, K] and an f32 weight through --tfm-cpu-pipeline,
# single-threaded, and prints the median GFLOP/s of REPEAT calls, beside
# PyTorch's (one thread, same shapes and layout) and the ratio.
#
# Usage: bench/linear.sh [M K N [LAYOUT [REPEAT [PIPELINE_OPTIONS]]]]
#   LAYOUT: in_out (W [K, N], linalg.matmul) or out_in (W [N, K], nn.Linear,
#   the transposed-B matmul); PIPELINE_OPTIONS e.g. "vectorize=false".
# Defaults: 512 768 3072 in_out 10 "".
# Needs transformer-opt (TFM_BUILD_DIR/bin or PATH) and mlir-runner.
set -euo pipefail
M=${1:-512} K=${2:-768} N=${3:-3072} LAYOUT=${4:-in_out} REPEAT=${5:-10}
OPTS=${6:-}
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
opt="$build/bin/transformer-opt"
[ -x "$opt" ] || opt=transformer-opt
llvm=/usr/lib/llvm-22
if [ "$LAYOUT" = out_in ]; then W="${N}x${K}"; else W="${K}x${N}"; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/linear.mlir" <<MLIR
func.func @linear(%x: tensor<1x${M}x${K}xf32> {tfm.input = "x"},
                  %w: tensor<${W}xf32> {tfm.param = "w"})
    -> (tensor<1x${M}x${N}xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<${LAYOUT}>}
      : (tensor<1x${M}x${K}xf32>, tensor<${W}xf32>) -> tensor<1x${M}x${N}xf32>
  return %y : tensor<1x${M}x${N}xf32>
}
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()
func.func @main() {
  %a = arith.constant 0.01 : f32
  %b = arith.constant 0.02 : f32
  %xe = tensor.empty() : tensor<1x${M}x${K}xf32>
  %x = linalg.fill ins(%a : f32) outs(%xe : tensor<1x${M}x${K}xf32>) -> tensor<1x${M}x${K}xf32>
  %we = tensor.empty() : tensor<${W}xf32>
  %w = linalg.fill ins(%b : f32) outs(%we : tensor<${W}xf32>) -> tensor<${W}xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant ${REPEAT} : index
  scf.for %i = %c0 to %n step %c1 {
    %t0 = func.call @rtclock() : () -> f64
    %y = func.call @linear(%x, %w) : (tensor<1x${M}x${K}xf32>, tensor<${W}xf32>) -> tensor<1x${M}x${N}xf32>
    %t1 = func.call @rtclock() : () -> f64
    %dt = arith.subf %t1, %t0 : f64
    func.call @printF64(%dt) : (f64) -> ()
    func.call @printNewline() : () -> ()
  }
  return
}
MLIR
"$opt" "$work/linear.mlir" --tfm-cpu-pipeline="$OPTS" -o "$work/linear.ll.mlir"
"$llvm/bin/mlir-runner" -O3 -e main -entry-point-result=void \
  -shared-libs="$llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so" \
  "$work/linear.ll.mlir" > "$work/times.txt"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 - "$work/times.txt" "$M" "$K" "$N" "$LAYOUT" "$OPTS" "$REPEAT" <<'PY'
import statistics, sys, time
import torch
times = [float(l) for l in open(sys.argv[1]) if l.strip()]
m, k, n = map(int, sys.argv[2:5])
layout, repeat = sys.argv[5], int(sys.argv[7])
med = statistics.median(times)
print(f"tfm   linear {m}x{k}x{n} {layout} [{sys.argv[6] or 'default'}]: "
      f"median {med * 1e3:.2f} ms, min {min(times) * 1e3:.2f} ms, "
      f"{2 * m * k * n / med / 1e9:.1f} GFLOP/s (median of {len(times)})")
# The peer: PyTorch on the same thread count (one), same shapes and layout.
torch.set_num_threads(1)
x = torch.full((1, m, k), 0.01)
w = torch.full((n, k) if layout == "out_in" else (k, n), 0.02)
f = (lambda: torch.nn.functional.linear(x, w)) if layout == "out_in" else (lambda: x @ w)
f()
ttimes = []
for _ in range(repeat):
    t = time.perf_counter(); f(); ttimes.append(time.perf_counter() - t)
tmed = statistics.median(ttimes)
print(f"torch linear {m}x{k}x{n} {layout}: median {tmed * 1e3:.2f} ms, "
      f"{2 * m * k * n / tmed / 1e9:.1f} GFLOP/s; tfm/torch time {med / tmed:.2f}")
PY
