#!/usr/bin/env bash
# Times one Mixtral MoE layer (tfm.moe, E experts, SwiGLU, nn.Linear weights)
# through --tfm-cpu-pipeline with transformer-runner, for several top_k, and
# prints the median run time of each next to its expert-GEMM FLOPs and its
# ratio to top_k = E (every expert on every token: the dense cost).
#
# Usage: bench/moe/run.sh [N D M E REPEAT "TOPKS"]
#   defaults: 256 tokens, d=512, m=1024, 8 experts, 20 runs, "1 2 4 8".
# Needs transformer-runner (TFM_BUILD_DIR/bin), /usr/bin/python3 with numpy.
set -euo pipefail
N=${1:-256} D=${2:-512} M=${3:-1024} E=${4:-8} REPEAT=${5:-20}
TOPKS=${6:-"1 2 4 8"}
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
runner="$build/bin/transformer-runner"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results="$work/results.txt"
for K in $TOPKS; do
  /usr/bin/python3 - "$work" "$N" "$D" "$M" "$E" "$K" <<'PY'
import sys
import numpy as np
work, n, d, m, e, k = sys.argv[1], *map(int, sys.argv[2:])
x = "tensor<1x%dx%dxf32>" % (n, d)
args = ['%%x: %s {tfm.input = "hidden"}' % x,
        '%%r: tensor<%dx%dxf32> {tfm.param = "gate.weight"}' % (e, d)]
ops, types = [], []
for i in range(e):
    for name, shape in (("w1", (m, d)), ("w3", (m, d)), ("w2", (d, m))):
        t = "tensor<%dx%dxf32>" % shape
        args.append('%%%s_%d: %s {tfm.param = "experts.%d.%s.weight"}'
                    % (name, i, t, i, name))
        ops.append("%%%s_%d" % (name, i))
        types.append(t)
with open("%s/moe_k%d.mlir" % (work, k), "w") as f:
    f.write("func.func @forward(%s) -> (%s {tfm.output = \"y\"}) {\n"
            "  %%y = tfm.moe %%x, %%r, %s {top_k = %d : i64} : (%s, "
            "tensor<%dx%dxf32>, %s) -> %s\n  return %%y : %s\n}\n"
            % (", ".join(args), x, ", ".join(ops), k, x, e, d,
               ", ".join(types), x, x))
np.save("%s/hidden.npy" % work,
        np.random.RandomState(0).randn(1, n, d).astype(np.float32))
PY
  out=$("$runner" "$work/moe_k$K.mlir" --random-weights 1 \
        --input hidden="$work/hidden.npy" --repeat "$REPEAT" --print-values 0)
  echo "$K $(echo "$out" | sed -n 's/.*median \([0-9.]*\) ms.*min \([0-9.]*\) ms.*/\1 \2/p')" >> "$results"
done
/usr/bin/python3 - "$results" "$N" "$D" "$M" "$E" "$REPEAT" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
n, d, m, e, rep = map(int, sys.argv[2:])
times = {int(k): (float(med), float(mn)) for k, med, mn in rows}
dense = times.get(e)
print("tfm.moe n=%d d=%d m=%d E=%d, median of %d runs (transformer-runner, "
      "--tfm-cpu-pipeline, 1 thread)" % (n, d, m, e, rep))
print("%6s %12s %10s %14s %16s %14s" % ("top_k", "median ms", "min ms",
                                        "expert GFLOP", "ratio to top_k=E",
                                        "ideal k/E"))
for k in sorted(times):
    med, mn = times[k]
    flops = 6.0 * n * d * m * k / 1e9
    ratio = "%.3f" % (med / dense[0]) if dense else "-"
    print("%6d %12.2f %10.2f %14.2f %16s %14.3f" % (k, med, mn, flops, ratio,
                                                    k / e))
PY
