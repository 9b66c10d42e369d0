#!/usr/bin/env bash
# Times one f32 GEMM y = x W^T (nn.Linear layout) through transformer-runner
# with each way of running it on an AMX CPU, interleaved over ROUNDS rounds,
# and prints each variant's per-round medians and their median:
#   tiles     debug=amx-choice=tiles (the default: AMX tiles, bf16x6)
#   measured  debug=amx-choice=measured (per thread and block of columns, the
#             cheaper of tiles and FMA as timed)
#   fma       amx=0 (the FMA pipeline)
# On a CPU without AMX all three are the FMA path.
#
# Usage: bench/amx-choice.sh [M K N [THREADS [ROUNDS [REPEAT]]]]
# Defaults: 512 2048 5632 2 5 10.
set -euo pipefail
M=${1:-512} K=${2:-2048} N=${3:-5632} THREADS=${4:-2} ROUNDS=${5:-5}
REPEAT=${6:-10}
root="$(cd "$(dirname "$0")/.." && pwd)"
runner="${TFM_BUILD_DIR:-$root/build}/bin/transformer-runner"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat > "$work/linear.mlir" <<MLIR
func.func @linear(%x: tensor<1x${M}x${K}xf32> {tfm.input = "x"},
                  %w: tensor<${N}x${K}xf32> {tfm.param = "w"})
    -> (tensor<1x${M}x${N}xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>}
      : (tensor<1x${M}x${K}xf32>, tensor<${N}x${K}xf32>) -> tensor<1x${M}x${N}xf32>
  return %y : tensor<1x${M}x${N}xf32>
}
MLIR
/usr/bin/python3 -c "import numpy as np; np.save('$work/x.npy', np.full((1, $M, $K), 0.01, np.float32))"
echo "linear ${M}x${K}x${N}, $THREADS thread(s), $ROUNDS rounds of $REPEAT calls; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$ROUNDS"); do
  for variant in "tiles:debug=amx-choice=tiles" "measured:debug=amx-choice=measured" "fma:amx=0"; do
    name=${variant%%:*} options=${variant#*:}
    ms=$("$runner" "$work/linear.mlir" --random-weights 1 --input "x=$work/x.npy" \
           --repeat "$REPEAT" --threads "$THREADS" --pipeline-options="$options" |
         sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')
    echo "$name $ms"
  done
done | /usr/bin/python3 -c '
import collections, statistics, sys
times = collections.defaultdict(list)
for line in sys.stdin:
    name, ms = line.split()
    times[name].append(float(ms))
for name, ms in times.items():
    print(f"{name:9s} median {statistics.median(ms):7.2f} ms   rounds: " +
          " ".join(f"{t:.2f}" for t in ms))
'
