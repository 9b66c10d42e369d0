#!/usr/bin/env bash
# libFuzzer targets for tfm's readers (fuzz/): the .safetensors, .npy, GGUF
# and config.json readers and transformer-opt's IR path (bound, parse, verify,
# contracts), built with clang-22 -fsanitize=fuzzer,address,undefined in
# build-fuzz/ (a small project of its own: the normal build stays lean).
#
#   scripts/fuzz.sh                 smoke: every target for 8 s (CI)
#   scripts/fuzz.sh smoke [SECS]    every target for SECS seconds
#   scripts/fuzz.sh long 600 [T..]  every target (or T..) for 600 s, keeping
#                                   the corpus in build-fuzz/corpus-<target>
#
# Seeds come from the test inputs (fuzz/make-corpus.py), dictionaries from
# fuzz/dict/. Ends with "fuzz: N targets, N runs, N crashes"; exits non-zero
# on a crash, leaving the input as build-fuzz/crash-<target>-*.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
main_build="${TFM_BUILD_DIR:-$root/build}"
build="${TFM_FUZZ_BUILD_DIR:-$root/build-fuzz}"
mode="${1:-smoke}"
case "$mode" in
  smoke) seconds="${2:-8}"; shift $(( $# > 1 ? 2 : $# )) ;;
  long) seconds="${2:-600}"; shift $(( $# > 1 ? 2 : $# )) ;;
  *) echo "usage: scripts/fuzz.sh [smoke [SECS] | long SECS [targets...]]" >&2; exit 2 ;;
esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors npy gguf config ir tokenizer generation-config)

bash "$root/scripts/setup.sh" >/dev/null  # libclang-rt-22-dev among others
# The IR target reuses the main build's generated dialect headers.
ninja -C "$main_build" MLIRTfmOpsIncGen MLIRTfmAttrsIncGen \
  MLIRTfmInterfacesIncGen MLIRTfmPassIncGen >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root/fuzz" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DTFM_MAIN_BUILD_DIR="$main_build" >/dev/null
fi
# Quiet when it builds; when it does not, the error (not a silent exit).
if ! ninja -C "$build" -j"${TFM_FUZZ_JOBS:-2}" $(printf 'fuzz-%s ' "${targets[@]}") \
    >"$build/build.log" 2>&1; then
  grep -E "error|FAILED" "$build/build.log" | head -20 >&2
  echo "fuzz: the fuzz targets did not build (whole log: $build/build.log)" >&2
  exit 1
fi

rm -rf "$build/seeds"
/usr/bin/python3 "$root/fuzz/make-corpus.py" "$root" "$build/seeds"

# libMLIR.so is not instrumented: its leaks at exit are not ours and LLVM's
# inlined allocator headers poison memory the library reuses (see
# scripts/sanitize.sh), so leak detection and user poisoning are off.
export ASAN_OPTIONS=detect_leaks=0:allow_user_poisoning=0:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

total_runs=0 crashes=0
for t in "${targets[@]}"; do
  # Smoke runs start afresh in their own folder; long runs grow corpus-<t>.
  corpus="$build/corpus-$t"
  if [ "$mode" = smoke ]; then corpus="$build/corpus-smoke-$t"; rm -rf "$corpus"; fi
  mkdir -p "$corpus"
  log="$build/fuzz-$mode-$t.log"
  set +e
  "$build/fuzz-$t" "$corpus" "$build/seeds/$t" -dict="$root/fuzz/dict/$t.dict" \
    -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=4096 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$build/crash-$t-" >"$log" 2>&1
  status=$?
  set -e
  runs=$(awk '/^stat::number_of_executed_units/ {print $2}' "$log")
  # The last status line: "#N  REDUCE cov: C ft: F corp: ..." (edges, features).
  cov=$(awk '/ cov: [0-9]+ ft: [0-9]+/ {line = $0} END {print line}' "$log" |
    sed -E 's/.* cov: ([0-9]+) ft: ([0-9]+).*/cov \1, ft \2/')
  total_runs=$(( total_runs + ${runs:-0} ))
  if [ "$status" -ne 0 ]; then
    crashes=$(( crashes + 1 ))
    echo "fuzz-$t: FAILED (exit $status); log $log:"
    grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20
  else
    echo "fuzz-$t: ${runs:-0} runs in ${seconds} s, ${cov:-no coverage line}, corpus $(ls "$corpus" | wc -l) inputs"
  fi
done
echo "fuzz: ${#targets[@]} targets, $total_runs runs, $crashes crashes"
[ "$crashes" -eq 0 ]
