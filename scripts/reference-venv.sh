#!/usr/bin/env bash
# Creates (once) the venv holding the Hugging Face reference packages that
# tests compare tfm against: `transformers` and `tokenizers`, pinned. They are
# references only, never dependencies of the product.
#
# The venv sees Debian's python3-torch (1.13) through --system-site-packages:
# transformers 4.46.3 is the newest release whose modeling code imports with
# torch 1.13 (4.51+ needs torch.distributed.tensor, torch >= 2.4), and PyPI
# has no CPU-only torch 2 wheel for Linux. Known limits of that pairing:
# `model.generate()` fails to import (torch 1.13's sharded-tensor dataclass
# on Python 3.11), so tests run greedy decoding as an explicit argmax loop;
# Qwen3 is newer than 4.46 (tests say how they build its reference).
#
# Usage: reference-venv.sh [DIR]  (default: $TFM_BUILD_DIR or build/, then
# reference-venv/ inside it). Prints the venv's python on its last line.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-${TFM_BUILD_DIR:-$root/build}/reference-venv}"
stamp="$dir/.tfm-pins-v2"
# gguf: llama.cpp's gguf-py (its numpy port of the quantizers), the
# reference the Q8_0 weights are checked against bit for bit.
pins=(transformers==4.46.3 tokenizers==0.20.3 safetensors==0.4.5
      huggingface_hub==0.26.2 gguf==0.17.1)
if [ ! -f "$stamp" ]; then
  rm -rf "$dir"
  /usr/bin/python3 -m venv --system-site-packages "$dir" >&2
  "$dir/bin/pip" install -q --disable-pip-version-check "${pins[@]}" >&2
  "$dir/bin/python" -c "import torch, transformers, tokenizers, gguf" >&2
  printf '%s\n' "${pins[@]}" > "$stamp"
fi
echo "$dir/bin/python"
