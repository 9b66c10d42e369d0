#!/usr/bin/env bash
# Links an artifact saved by `transformer-runner --emit-artifact DIR` into
# DIR/model.so: the host LLVM IR (kernels embedded) compiled with llc as PIC,
# the glue, and libtfm_cuda_runtime.so (found next to model.so at run time:
# it is copied into DIR). Usage: scripts/gpu-artifact.sh DIR [BUILD_DIR]
set -euo pipefail
dir="$1"
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${2:-${TFM_BUILD_DIR:-$root/build}}"
llvm_bin="${LLVM_BIN:-/usr/lib/llvm-22/bin}"
cc="${CC:-clang-22}"
"$llvm_bin/llc" -O3 -filetype=obj -relocation-model=pic \
  "$dir/model.ll" -o "$dir/model.o"
cp "$build/lib/libtfm_cuda_runtime.so" "$dir/"
"$cc" -O2 -fPIC -shared "$dir/glue.c" "$dir/model.o" -o "$dir/model.so" \
  -L"$dir" -ltfm_cuda_runtime -Wl,-rpath,'$ORIGIN'
echo "$dir/model.so"
