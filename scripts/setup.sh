#!/usr/bin/env bash
# Installs every Debian package tfm needs to build, test and run. Idempotent:
# `apt-get update` runs only when a package is missing.
set -euo pipefail

PACKAGES=(
  # LLVM/MLIR 22: headers, libMLIR.so, mlir-tblgen, FileCheck, lit, llc.
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # clang-22 + lld compile MLIR-heavy TUs ~40% faster than g++ 12.
  clang-22 lld-22
  cmake ninja-build
  # OpenMP runtime: the CPU pipeline's parallel loops call libomp.
  libomp-22-dev
  # Open MPI: tensor-parallel runs (`mpirun -np N transformer-runner ...
  # --tensor-parallel N`), loaded at run time (tfm/Runtime/Mpi.h).
  libopenmpi-dev openmpi-bin
  # libFuzzer and the sanitizer runtimes: the fuzz smoke run in scripts/test.sh.
  libclang-rt-22-dev
  # The numerical reference for tests: PyTorch 1.13 CPU for /usr/bin/python3.
  python3-torch python3-numpy
  # `pip install ./python` into a venv (test/python/pip-install.test).
  python3-pip python3-venv python3-setuptools
  # Without it torch uses the reference BLAS (30x slower) in benchmarks.
  libopenblas0-pthread
  # The public-domain King James Bible the bundled tiny model was trained on
  # (models/tiny-kjv/train.py reads it through the `bible` program).
  bible-kjv
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
