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
set -e

count() { # count <lit summary label>: the number lit printed for it, or 0.
  local n
  n=$(grep -E "^ *$1 *: *[0-9]+" "$log" | head -1 | sed -E 's/.*: *([0-9]+).*/\1/')
  echo "${n:-0}"
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
