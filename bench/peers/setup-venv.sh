#!/usr/bin/env bash
# Creates bench/.venv (git-ignored) with the pinned onnxruntime and onnx of
# bench/peers/requirements.txt, for bench/peers/run.py. Bench-only: nothing
# in the product or the tests imports them.
#
# The venv is built on Debian's /usr/bin/python3 (3.11) with
# --system-site-packages, so Debian's PyTorch 1.13 (needed by
# torch.onnx.export) and numpy stay visible; numpy is pinned to Debian's own
# version as a constraint so that pip never installs a numpy 2 that torch
# 1.13 cannot load.
#
# Usage: bash bench/peers/setup-venv.sh   (idempotent; needs PyPI access)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
venv="$here/../.venv"
py=/usr/bin/python3
numpy_version=$("$py" -c 'import numpy; print(numpy.__version__)')
"$py" -c 'import torch' || { echo "error: $py has no torch (run scripts/setup.sh)" >&2; exit 1; }
[ -x "$venv/bin/python" ] || "$py" -m venv --system-site-packages "$venv"
constraints=$(mktemp)
trap 'rm -f "$constraints"' EXIT
echo "numpy==$numpy_version" > "$constraints"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
  -c "$constraints" -r "$here/requirements.txt"
"$venv/bin/python" - <<'PY'
import numpy, onnx, onnxruntime, torch
print(f"bench/.venv: onnxruntime {onnxruntime.__version__}, onnx {onnx.__version__}, "
      f"numpy {numpy.__version__}, torch {torch.__version__}")
PY
