#!/usr/bin/env bash
# The second job: builds tfm with AddressSanitizer + UndefinedBehaviorSanitizer
# in build-asan/ and runs the whole lit suite against those tools (the
# compiled models themselves are JIT code, not instrumented). Ends with lit's
# counts; exits non-zero on any failure. Not part of `.ci/run` (it doubles
# the build); run it before merging changes to parsers, readers or the runner.
# Usage: scripts/sanitize.sh [lit --filter regex]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-asan"
bash "$root/scripts/setup.sh"
launcher=()
if command -v ccache >/dev/null && [ "${TFM_CCACHE:-1}" != 0 ]; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# -fno-sanitize=function: UBSan's check of an indirect call reads the 8 bytes
# before the callee, which for a JIT-compiled entry at the start of its
# mapping is an unmapped page (a SEGV that is not a bug); vptr: libMLIR.so
# has no RTTI. Configured on every run so that flag changes take effect.
cmake -G Ninja "${launcher[@]}" -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined -fno-sanitize=vptr,function -fno-omit-frame-pointer" \
    "-DCMAKE_EXE_LINKER_FLAGS=-fsanitize=address,undefined" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=address,undefined" >/dev/null
ninja -C "$build" -j"${TFM_JOBS:-2}"
# The pinned Hugging Face references, for the hf-reference tests.
TFM_BUILD_DIR="$build" bash "$root/scripts/reference-venv.sh" >/dev/null
# libMLIR.so is not instrumented: leaks in its state at exit are not ours, so
# leak detection is off; and LLVM's allocator headers, inlined into our
# instrumented code, poison memory that the uninstrumented library later
# reuses (false "use-after-poison" inside the MLIR parser), so manual
# poisoning is ignored. Every other error aborts.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allow_user_poisoning=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
/usr/lib/llvm-22/bin/lit -sv --param asan=1 "$build/test" --filter "${1:-.}"
