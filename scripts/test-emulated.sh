#!/usr/bin/env bash
# The lit suite as an AVX2-only machine runs it, on any x86-64 host: every
# tool that plans or executes code runs under qemu-x86_64 (Debian's
# qemu-user, installed here if missing) with an emulated CPU, whose CPUID is
# what LLVM's host detection and tfm's plan read (test/lit.cfg.py,
# `--param qemu-cpu`). Emulation is slow: give a filter for a subset (and
# not lit's --max-time, which drops every result at its limit).
#
#   bash scripts/test-emulated.sh [lit args...]   # e.g. --filter 'hostile|Pipelines'
#
# TFM_QEMU_CPU names the CPU (default: an AMD EPYC Milan, Zen 3: AVX2 + FMA,
# no AVX-512), less the features QEMU's TCG does not implement (it warns of
# each on every start otherwise, into the tools' stderr).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
if ! command -v qemu-x86_64 >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get install -y -q qemu-user >/dev/null
fi
cpu="${TFM_QEMU_CPU:-EPYC-Milan}"
if [ -z "${TFM_QEMU_CPU:-}" ]; then
  for f in pcid invpcid rdseed sha-ni rdpid fsrm fxsr-opt misalignsse \
           3dnowprefetch osvw topoext perfctr-core clzero xsaveerptr wbnoinvd \
           ibpb ibrs amd-stibp amd-ssbd nrip-save xsavec xsaves; do
    cpu="$cpu,-$f"
  done
fi
exec /usr/lib/llvm-22/bin/lit -sv --param "qemu-cpu=$cpu" "$@" "$build/test"
