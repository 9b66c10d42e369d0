#!/usr/bin/env bash
# Builds llama.cpp's llama-bench (and llama-quantize, which makes the Q4_K_M
# file) from the sources the llama-cpp-python 0.3.16
# source distribution vendors (pinned by its sha256), into
# $TFM_BUILD_DIR/llamacpp (default build/llamacpp), for the host CPU
# (GGML_NATIVE: llama.cpp at its best on this machine). A peer to measure
# against, never a dependency of tfm. Prints llama-bench's path last.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
dir="${TFM_BUILD_DIR:-$root/build}/llamacpp"
version=0.3.16
sha256=34ed0f9bd9431af045bb63d9324ae620ad0536653740e9bb163a2e1fcb973be6
url="https://files.pythonhosted.org/packages/e4/b4/c8cd17629ced0b9644a71d399a91145aedef109c0333443bef015e45b704/llama_cpp_python-$version.tar.gz"
tarball="$dir/llama_cpp_python-$version.tar.gz"
mkdir -p "$dir"
if [ ! -x "$dir/build/bin/llama-bench" ] || [ ! -x "$dir/build/bin/llama-quantize" ]; then
  if [ ! -f "$dir/build/build.ninja" ]; then
    [ -f "$tarball" ] || curl -sSL -o "$tarball" "$url"
    echo "$sha256  $tarball" | sha256sum -c --quiet
    rm -rf "$dir/src" && mkdir -p "$dir/src"
    tar xzf "$tarball" -C "$dir/src" --strip-components=3 \
      "llama_cpp_python-$version/vendor/llama.cpp"
    cmake -S "$dir/src" -B "$dir/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF \
      -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF >&2
  fi
  ninja -C "$dir/build" llama-bench llama-quantize >&2
fi
echo "$dir/build/bin/llama-bench"
