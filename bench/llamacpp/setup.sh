#!/usr/bin/env bash
# Builds llama.cpp's llama-bench (and llama-quantize, which makes the Q4_K_M
# file) from the sources the llama-cpp-python 0.3.16
# source distribution vendors (pinned by its sha256), into
# $TFM_BUILD_DIR/llamacpp (default build/llamacpp), for the host CPU
# (GGML_NATIVE: llama.cpp at its best on this machine). A peer to measure
# against, never a dependency of tfm. Prints llama-bench's path last.
#
#   setup.sh          # build/llamacpp/build: GGML_NATIVE
#   setup.sh avx2     # build/llamacpp/build-avx2: AVX2 + FMA + F16C + BMI2 and
#                     # nothing newer (ggml's GGML_NATIVE=OFF defaults), the
#                     # peer of tfm's TFM_CPU=x86-64-v3 code on an AVX-512 host
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${TFM_BUILD_DIR:-$root/build}/llamacpp"
isa="${1:-native}"
case "$isa" in
  native) build="$dir/build"; flags=(-DGGML_NATIVE=ON) ;;
  avx2) build="$dir/build-avx2"; flags=(-DGGML_NATIVE=OFF -DGGML_AVX=ON
          -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
          -DGGML_AVX512=OFF -DGGML_AVX_VNNI=OFF) ;;
  *) echo "setup.sh: unknown ISA '$isa' (native or avx2)" >&2; exit 2 ;;
esac
version=0.3.16
sha256=34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6
url="https://files.pythonhosted.org/packages/e4/b4/c8cd17629ced0b9644a71d399a91145aedef109c0333443bef015e45b704/llama_cpp_python-$version.tar.gz"
tarball="$dir/llama_cpp_python-$version.tar.gz"
mkdir -p "$dir"
if [ ! -x "$build/bin/llama-bench" ] || [ ! -x "$build/bin/llama-quantize" ]; then
  if [ ! -f "$build/build.ninja" ]; then
    if [ ! -f "$dir/src/CMakeLists.txt" ]; then
      [ -f "$tarball" ] || curl -sSL -o "$tarball" "$url"
      echo "$sha256  $tarball" | sha256sum -c --quiet
      rm -rf "$dir/src" && mkdir -p "$dir/src"
      tar xzf "$tarball" -C "$dir/src" --strip-components=3 \
        "llama_cpp_python-$version/vendor/llama.cpp"
    fi
    cmake -S "$dir/src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      "${flags[@]}" -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF >&2
  fi
  ninja -C "$build" llama-bench llama-quantize >&2
fi
echo "$build/bin/llama-bench"
