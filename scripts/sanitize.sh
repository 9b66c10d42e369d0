#!/usr/bin/env bash
# Builds tfm with AddressSanitizer + UndefinedBehaviorSanitizer in
# build-asan/ and runs the lit tests that exercise the tools on bad and good
# input (parsers, verifiers, importers, the runner's readers). Not part of
# CI: an occasional check. Usage: scripts/sanitize.sh [lit --filter regex]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-asan"
bash "$root/scripts/setup.sh"
if ! dpkg-query -W -f='${Status}' libclang-rt-22-dev 2>/dev/null | grep -q "install ok installed"; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libclang-rt-22-dev >/dev/null
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize=vptr -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
fi
ninja -C "$build"
# libMLIR.so is not instrumented: leaks in its state at exit are not ours, so
# leak detection is off; and LLVM's allocator headers, inlined into our
# instrumented code, poison memory that the uninstrumented library later
# reuses (false "use-after-poison" inside the MLIR parser), so manual
# poisoning is ignored. Every other error aborts.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
/usr/lib/llvm-22/bin/lit -sv "$build/test" --filter "${1:-Dialect|Target|runner|Conversion|python}"
