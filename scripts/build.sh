#!/usr/bin/env bash
# Configures (once) and builds tfm in build/ with clang-22 + lld + Ninja
# against Debian's libMLIR.so. Usage: scripts/build.sh [ninja targets...]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
launcher=()
# ccache, when a developer has it, shares objects between worktrees (CI has none).
if command -v ccache >/dev/null && [ "${TFM_CCACHE:-1}" != 0 ]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja "${launcher[@]}" -S "$root" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
ninja -C "$build" "$@"
