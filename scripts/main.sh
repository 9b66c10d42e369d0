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

echo
echo "=== running examples/tiny-gpt2.mlir (random weights, seed 1; 10 timed runs) ==="
ids="$(mktemp --suffix .npy)"
trap 'rm -f "$ids"' EXIT
/usr/bin/python3 -c "import numpy as np; np.save('$ids', (np.arange(8, dtype=np.int64).reshape(1, 8) * 7) % 256)"
"$bin/transformer-runner" "$root/examples/tiny-gpt2.mlir" --random-weights 1 \
  --input "input_ids=$ids" --repeat 10

echo
echo "=== generating with models/tiny-kjv (a byte-level Llama trained on the KJV) ==="
"$bin/transformer-runner" "$root/models/tiny-kjv/config.json" \
  --weights "$root/models/tiny-kjv/model.safetensors" \
  --prompt "${TFM_PROMPT:-In the beginning}" --generate "${TFM_GENERATE:-200}"

echo
echo "=== the same with q8_0 weights (--quantize q8_0: llama.cpp's Q8_0 blocks) ==="
"$bin/transformer-runner" "$root/models/tiny-kjv/config.json" \
  --weights "$root/models/tiny-kjv/model.safetensors" --quantize q8_0 \
  --prompt "${TFM_PROMPT:-In the beginning}" --generate "${TFM_GENERATE:-200}"
