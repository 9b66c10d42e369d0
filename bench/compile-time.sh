#!/usr/bin/env bash
# Compile time of a whole model (issue 10): the 12-layer GPT-2-small shape
# (d 768, 12 heads, V 50257) imported from config.json with @prefill and
# @decode over a KV cache, lowered and JIT-compiled by transformer-runner.
# Reports, per run, the wall time of each compile step from --mlir-timing
# (import, the CPU signature and codegen stages, LLVM, the compiled-code
# cache), their sum, and the median over runs, for a cold compile (an empty
# --cache-dir) and for a second run of the same model (the cache hit).
# Extra arguments go to the runner.
# Usage: bench/compile-time.sh [runs] [layers] [runner args...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
runner="${TFM_BUILD_DIR:-$root/build}/bin/transformer-runner"
runs="${1:-3}"; layers="${2:-12}"; shift $(( $# < 2 ? $# : 2 ))
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
printf '{"model_type":"gpt2","n_layer":%d,"n_embd":768,"n_head":12,"vocab_size":50257,"n_positions":1024}' \
  "$layers" > "$work/config.json"
/usr/bin/python3 -c "import numpy as np; np.save('$work/ids.npy', np.arange(16, dtype=np.int64).reshape(1, 16))"
echo "# compile time, GPT-2-small shape, $layers layers, prefill (16 tokens) + decode"
echo "# $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
cold=(); warm=()
for i in $(seq "$((2 * runs))"); do
  # Odd runs start from an empty cache; even runs find the previous one's.
  if (( i % 2 )); then kind=cold; rm -rf "$work/cache"; else kind=warm; fi
  "$runner" "$work/config.json" --random-weights 1 --input-ids "$work/ids.npy" \
    --generate 2 --mlir-timing --cache-dir "$work/cache" "$@" \
    > "$work/out.txt" 2> "$work/timing.txt"
  grep -q "compile: .*(cache $([ $kind = cold ] && echo miss || echo hit))" "$work/out.txt" ||
    { echo "run $i: expected a cache $kind run:"; cat "$work/out.txt"; exit 1; }
  # Top-level timers of the report: "[user (pct)]  wall (pct)  name", the
  # name after exactly two spaces (nested timers have more).
  line=$(/usr/bin/python3 - "$work/timing.txt" <<'PY'
import re, sys
parts, total = [], 0.0
for line in open(sys.argv[1]):
    # Two columns (user, wall) when threads ran, else the wall time alone.
    m = re.match(r"^\s+(?:[0-9.]+ \([ 0-9.]+%\)\s+)?([0-9.]+) \([ 0-9.]+%\)  (\S.*)$", line)
    if m and m.group(2) not in ("Total", "Rest"):
        parts.append("%s %.2f s" % (m.group(2), float(m.group(1))))
        total += float(m.group(1))
print("; ".join(parts) + "; total %.2f" % total)
PY
)
  echo "run $i ($kind): $line"
  if [ $kind = cold ]; then cold+=("${line##*total }"); else warm+=("${line##*total }"); fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "median compile: cold $(median "${cold[@]}") s, second run (cache hit) $(median "${warm[@]}") s, over $runs runs each (load after: $(cut -d' ' -f1-3 /proc/loadavg))"
