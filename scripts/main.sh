#!/usr/bin/env bash
# The main job: installs what is missing, builds, then compiles the bundled
# example models, prints their ledgers, and runs the bundled model through
# the JIT, printing its output and timings.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup.sh"
"$root/scripts/build.sh"
bin="$build/bin"

for model in "$root"/examples/*.mlir; do
  echo
  echo "=== $(basename "$model") ==="
  "$bin/transformer-opt" "$model" --tfm-verify-contracts --tfm-print-ledger \
    -o /dev/null
done

if [ -x "$bin/transformer-runner" ]; then
  echo
  echo "=== running examples/tiny-gpt2.mlir (random weights, seed 1) ==="
  ids="$(mktemp --suffix .npy)"
  /usr/bin/python3 -c "import numpy as np; np.save('$ids', np.arange(8, dtype=np.int64).reshape(1, 8) * 7 % 256)"
  "$bin/transformer-runner" "$root/examples/tiny-gpt2.mlir" --random-weights 1 \
    --input "input_ids=$ids" --repeat 10
  rm -f "$ids"
fi
