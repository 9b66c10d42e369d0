#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every lit test
# (FileCheck, -verify-diagnostics, runner and PyTorch comparisons) and ends
# with a counted summary line "N passed, N failed". Before it, a smoke run of
# the fuzz targets (scripts/fuzz.sh: 8 s each) prints
# "fuzz: N targets, N runs, N crashes" and fails the run on a crash.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup.sh"
"$root/scripts/build.sh"
# The pinned Hugging Face reference packages (transformers, tokenizers) that
# the hf-reference tests compare against, in a venv inside the build dir.
TFM_BUILD_DIR="$build" bash "$root/scripts/reference-venv.sh" >/dev/null

log="$(mktemp)"
set +e
/usr/lib/llvm-22/bin/lit -sv --time-tests "$build/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# On an AVX-512 host, the numerics tests once more with the code planned and
# emitted for the AVX2 level (lit's cpu= sets TFM_CPU): wherever CI runs, it
# executes the AVX2 path too. An AVX2 host ran it above.
if grep -qw avx512f /proc/cpuinfo; then
  echo "numerics again for cpu=x86-64-v3 (AVX2 code on this AVX-512 host)"
  /usr/lib/llvm-22/bin/lit -sv --param cpu=x86-64-v3 \
    --filter "${TFM_AVX2_FILTER:-numerics|models/}" "$build/test" 2>&1 |
    tee -a "$log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
set -e

count() { # count <lit summary label>: the sum of what each lit run printed.
  { grep -E "^ *$1 *: *[0-9]+" "$log" || true; } | sed -E 's/.*: *([0-9]+).*/\1/' |
    awk '{ n += $1 } END { print n + 0 }'
}
passed=$(( $(count Passed) + $(count "Expectedly Failed") ))
failed=$(( $(count Failed) + $(count "Unexpectedly Passed") + $(count Unresolved) + $(count "Timed Out") ))
skipped=$(( $(count Unsupported) + $(count Skipped) ))
rm -f "$log"

set +e
bash "$root/scripts/fuzz.sh" smoke "${TFM_FUZZ_SECONDS:-8}"
fuzz_status=$?
set -e

if [ "$fuzz_status" -ne 0 ]; then
  echo "fuzz: failed (exit $fuzz_status; its error is above)"
fi
echo "$passed passed, $failed failed, $skipped skipped"
if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ] || [ "$passed" -eq 0 ] ||
   [ "$fuzz_status" -ne 0 ]; then
  exit 1
fi
