#!/usr/bin/env bash
# The one-shot device check of the GPU path, in two halves.
#
#   scripts/gpu-check.sh prepare [CHIP]   here, no GPU needed (a few minutes):
#       builds the tools, compiles every case with --tfm-gpu-pipeline for CHIP
#       (default sm_90) into a saved artifact (transformer-runner
#       --emit-artifact + scripts/gpu-artifact.sh) and computes the reference
#       outputs of the numerics cases on the CPU path (same random weights
#       and inputs). Everything lands in $BUILD/gpu-check.
#   scripts/gpu-check.sh run              on the GPU machine (no network, no
#       MLIR/LLVM needed): nvidia-smi, then every case with tfm-artifact-run:
#       numerics against the references, timings (median of N), TFLOP/s and
#       tokens/s, then a summary table. Exit status: the number of failed
#       cases.
#   scripts/gpu-check.sh pack             here, after prepare: the cases, the
#       tool and the runtime into $BUILD/devcarry (carry build/devcarry).
#   scripts/gpu-check.sh unpack           there, before run.
#   scripts/gpu-check.sh sanitize         there, after run: compute-sanitizer
#       memcheck and racecheck over a few small cases.
#
# What to carry to the GPU machine: build/devcarry (from pack).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${TFM_BUILD_DIR:-$root/build}"
out="$build/gpu-check"
py=/usr/bin/python3

# Numerics cases: NAME MODEL ENTRY PIPELINE-OPTIONS(comma-separated) ATOL
# RTOL RESULT EXTRA-INPUT
# (models are files under $out/models, written by write_models).
numerics_cases() {
  cat <<'EOF'
tiny-gpt2-f32 tiny-gpt2 forward dtype=f32 1e-4 1e-3 logits
tiny-gpt2-f16 tiny-gpt2 forward dtype=f16 5e-3 5e-2 logits
tiny-gpt2-flash-f32 tiny-gpt2 forward dtype=f32,flash-attention=1 1e-4 1e-3 logits
tiny-gpt2-sync-f32 tiny-gpt2 forward dtype=f32,async=0,row-reductions=0 1e-4 1e-3 logits
llama-gqa-f32 llama-gqa forward dtype=f32 1e-4 1e-3 logits
llama-gqa-f16 llama-gqa forward dtype=f16 5e-3 5e-2 logits
llama-gqa-decode-f32 llama-gqa-kv decode dtype=f32 1e-4 1e-3 logits position=5
llama-gqa-ragged-decode-f32 llama-gqa-kv-ragged decode dtype=f32 1e-4 1e-3 logits
mixtral-tiny-f32 mixtral-tiny forward dtype=f32 1e-4 1e-3 logits
linear-nt-f16 linear-nt forward dtype=f16 1e-3 2e-2 y
linear-nn-f16 linear-nn forward dtype=f16 1e-3 2e-2 y
linear-nt-f32 linear-nt forward dtype=f32 1e-4 1e-3 y
flash-s77-d64-mha flash-s77-d64-mha forward dtype=f16 5e-3 5e-2 o
flash-s77-d128-gqa flash-s77-d128-gqa forward dtype=f16 5e-3 5e-2 o
flash-s77-d64-gqa-noncausal flash-s77-d64-gqa-noncausal forward dtype=f16 5e-3 5e-2 o
flash-s128-d64-gqa flash-s128-d64-gqa forward dtype=f16 5e-3 5e-2 o
flash-s128-d128-mha flash-s128-d128-mha forward dtype=f16 5e-3 5e-2 o
flash-s1000-d64-mha flash-s1000-d64-mha forward dtype=f16 5e-3 5e-2 o
flash-s1000-d64-gqa flash-s1000-d64-gqa forward dtype=f16 5e-3 5e-2 o
flash-s1000-d128-mha flash-s1000-d128-mha forward dtype=f16 5e-3 5e-2 o
flash-s1000-d128-gqa flash-s1000-d128-gqa forward dtype=f16 5e-3 5e-2 o
flash-offset-d128-gqa flash-offset-d128-gqa forward dtype=f16 5e-3 5e-2 o position=200
flash-decode-d128-gqa flash-decode-d128-gqa forward dtype=f16 5e-3 5e-2 o position=1500
flash-decode-d64-mha flash-decode-d64-mha forward dtype=f16 5e-3 5e-2 o position=1000
linear-nt-f16-sm90a linear-nt forward chip=sm_90a,dtype=f16 1e-3 2e-2 y
linear-nn-f16-sm90a linear-nn forward chip=sm_90a,dtype=f16 1e-3 2e-2 y
linear-m64-nt-f16-sm90a linear-m64-nt forward chip=sm_90a,dtype=f16 1e-3 2e-2 y
gpt2-wgmma-f16-sm90a gpt2-wgmma forward chip=sm_90a,dtype=f16 5e-3 5e-2 logits
linear-nn-f16-sm90a-serial linear-nn forward chip=sm_90a,dtype=f16,debug=warpgroup-mma-overlap=0 1e-3 2e-2 y
linear-matvec-nt-f16 linear-mv-nt forward dtype=f16 1e-3 2e-2 y
linear-matvec-nn-f16 linear-mv-nn forward dtype=f16 1e-3 2e-2 y
linear-split-nt-f16 linear-split-nt forward dtype=f16 1e-3 2e-2 y
llama-gqa-decode-f16 llama-gqa-kv decode dtype=f16 5e-3 5e-2 logits position=5
EOF
}

# A case's options may name its own chip (chip=sm_90a: the TMA + wgmma
# matmul kernels) instead of the one given to prepare: prints "CHIP OPTIONS".
case_chip() {
  local chip="$2" rest="" o
  for o in ${1//,/ }; do
    case "$o" in
      chip=*) chip="${o#chip=}" ;;
      *) rest="${rest:+$rest,}$o" ;;
    esac
  done
  echo "$chip $rest"
}

write_models() {
  local m="$out/models"
  mkdir -p "$m"
  cp "$root/examples/tiny-gpt2.mlir" "$m/tiny-gpt2.mlir"
  local hf="$root/test/Target/HuggingFace/Inputs"
  "$build/bin/transformer-translate" --import-hf-config "$hf/llama-gqa.json" \
    --batch 1 --seq-len 32 -o "$m/llama-gqa.mlir"
  "$build/bin/transformer-translate" --import-hf-config "$hf/llama-gqa.json" \
    --batch 1 --seq-len 16 --kv-cache 32 -o "$m/llama-gqa-kv.mlir"
  # A ragged batch's decode step: a position per sequence (random in-range
  # positions from make_inputs).
  "$build/bin/transformer-translate" --import-hf-config "$hf/llama-gqa.json" \
    --batch 3 --seq-len 16 --kv-cache 32 --per-sequence-positions \
    -o "$m/llama-gqa-kv-ragged.mlir"
  "$build/bin/transformer-translate" --import-hf-config "$hf/mixtral-tiny.json" \
    --batch 1 --seq-len 16 -o "$m/mixtral-tiny.mlir"
  "$build/bin/transformer-translate" --import-hf-config "$hf/gpt2-small.json" \
    --batch 1 --seq-len 128 --kv-cache 256 -o "$m/gpt2-small.mlir"
  # One projection, 256 x 256 x 256, both weight layouts: the tensor-core
  # kernel with f16 operands.
  linear "$m/linear-nt.mlir" 256 256 256 out_in
  linear "$m/linear-nn.mlir" 256 256 256 in_out
  linear "$m/gemm-4096.mlir" 4096 4096 4096 out_in
  # A decode step's MLP up-projection at Llama 3 8B's size (one row, 117 MB
  # of f16 weight: memory-bound), both weight layouts.
  linear "$m/matvec-nt-llama.mlir" 1 14336 4096 out_in
  linear "$m/matvec-nn-llama.mlir" 1 14336 4096 in_out
  # Matmuls of few rows (--tfm-gpu-matvec): one row against an [N, K]
  # weight, three rows against a [K, N] one (N = 1000: partial warps and
  # blocks); and an [N, K] weight whose N is no multiple of 64 (the kernel
  # takes the first 960 columns, the SIMT path the last 40).
  linear "$m/linear-mv-nt.mlir" 1 1000 256 out_in
  linear "$m/linear-mv-nn.mlir" 3 1000 256 in_out
  linear "$m/linear-split-nt.mlir" 128 1000 256 out_in
  # sm_90a wgmma kernel with 64x128 block tiles, the ring wrapping twice.
  linear "$m/linear-m64-nt.mlir" 64 256 512 out_in
  # GPT-2 whose GEMMs all suit the wgmma kernel (n_embd 128, S = 128).
  "$py" -c "import json, sys; c = json.load(open(sys.argv[1])); c.update(n_embd=128, n_layer=1, n_positions=256, n_ctx=256); json.dump(c, open(sys.argv[2], 'w'))" \
    "$hf/gpt2-tiny.json" "$m/gpt2-wgmma.json"
  "$build/bin/transformer-translate" --import-hf-config "$m/gpt2-wgmma.json" \
    --batch 1 --seq-len 128 -o "$m/gpt2-wgmma.mlir"
  # Causal attention alone, [1, H, S, d] with H * d = 2048 (timing; the
  # FA2-style kernel of --tfm-gpu-flash-attention with dtype=f16).
  for s in 512 1024 2048 4096 8192 16384; do
    for d in 64 128; do
      attention "$m/attn-s$s-d$d.mlir" "$s" "$d" $((2048 / d))
    done
  done
  # Numerics of the flash-attention kernel: partial query/key tiles (77,
  # 1000), MHA (4 heads; 2 at S = 1000) and GQA (8 query heads over 2; 4
  # over 2 at S = 1000, to keep what is carried to the GPU machine small),
  # batch 2 for some, non-causal, and a chunk of 16 queries at position 200
  # over 300 keys.
  attention "$m/flash-s77-d64-mha.mlir" 77 64 4 4 77 true 2
  attention "$m/flash-s77-d128-gqa.mlir" 77 128 8 2 77 true 1
  attention "$m/flash-s77-d64-gqa-noncausal.mlir" 77 64 8 2 77 false 1
  attention "$m/flash-s128-d64-gqa.mlir" 128 64 8 2 128 true 2
  attention "$m/flash-s128-d128-mha.mlir" 128 128 4 4 128 true 1
  attention "$m/flash-s1000-d64-mha.mlir" 1000 64 2 2 1000 true 1
  attention "$m/flash-s1000-d64-gqa.mlir" 1000 64 4 2 1000 true 1
  attention "$m/flash-s1000-d128-mha.mlir" 1000 128 2 2 1000 true 1
  attention "$m/flash-s1000-d128-gqa.mlir" 1000 128 4 2 1000 true 1
  attention "$m/flash-offset-d128-gqa.mlir" 16 128 8 2 300 true 1 offset
  # Split-KV decode: one query at a position of a longer cache (32 and 16
  # splits; the splits past the position are empty).
  attention "$m/flash-decode-d128-gqa.mlir" 1 128 8 2 2048 true 1 offset
  attention "$m/flash-decode-d64-mha.mlir" 1 64 4 4 1024 true 1 offset
  # Timing of a decode step over a long cache (Llama 3 8B's heads).
  attention "$m/attn-decode-s16384-d128.mlir" 1 128 32 8 16384 true 1 offset
}

# linear FILE M N K LAYOUT: y[1, M, N] = x[1, M, K] W.
linear() {
  local w
  if [ "$5" = out_in ]; then w="$3x$4"; else w="$4x$3"; fi
  cat > "$1" <<EOF
func.func @forward(%x: tensor<1x$2x$4xf32> {tfm.input = "x"},
                   %w: tensor<${w}xf32> {tfm.param = "w"})
    -> (tensor<1x$2x$3xf32> {tfm.output = "y"}) {
  %y = tfm.linear %x, %w {layout = #tfm.layout<$5>} : (tensor<1x$2x$4xf32>, tensor<${w}xf32>) -> tensor<1x$2x$3xf32>
  return %y : tensor<1x$2x$3xf32>
}
EOF
}

# attention FILE S D H [HKV SKV CAUSAL B [offset]]: o = attention(q, k, v),
# q [B, H, S, D], k and v [B, HKV, SKV, D]; with "offset", an index input
# "position" is the position of the first query.
attention() {
  local s="$2" d="$3" h="$4" hkv="${5:-$4}" skv="${6:-$2}" causal="${7:-true}"
  local b="${8:-1}" offset="${9:-}"
  local q="tensor<${b}x${h}x${s}x${d}xf32>" kv="tensor<${b}x${hkv}x${skv}x${d}xf32>"
  local pos_arg="" pos_use="" pos_type=""
  if [ "$offset" = offset ]; then
    pos_arg=', %pos: index {tfm.input = "position"}'
    pos_use=", %pos"
    pos_type=", index"
  fi
  cat > "$1" <<EOF
func.func @forward(%q: $q {tfm.input = "q"}, %k: $kv {tfm.input = "k"},
                   %v: $kv {tfm.input = "v"}$pos_arg) -> ($q {tfm.output = "o"}) {
  %o = tfm.attention %q, %k, %v$pos_use {causal = $causal} : ($q, $kv, $kv$pos_type) -> $q
  return %o : $q
}
EOF
}

# Inputs of entry $3 of model $1 into dir $2: ids within the vocabulary,
# or small random floats.
make_inputs() {
  "$py" - "$1" "$2" "$3" <<'EOF'
import re, sys
import numpy as np
model, outdir, entry = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(model).read()
# The entry's signature only: entries differ in their input shapes.
text = text[text.index(f"func.func @{entry}("):]
text = text[:text.index("{\n")]
rng = np.random.default_rng(7)
for m in re.finditer(r'%\w+: tensor<([0-9x]+)x(\w+)> \{tfm\.input = "(\w+)"', text):
    shape = [int(d) for d in m.group(1).split("x")]
    dtype, name = m.group(2), m.group(3)
    if dtype == "i64":
        np.save(f"{outdir}/{name}.npy", rng.integers(0, 32, size=shape, dtype=np.int64))
    else:
        np.save(f"{outdir}/{name}.npy", (rng.random(shape, dtype=np.float32) - 0.5))
EOF
}

input_flags() {
  local dir="$1" flags=""
  for f in "$dir"/inputs/*.npy; do
    [ -e "$f" ] || continue
    local name
    name="$(basename "$f" .npy)"
    flags="$flags --input $name=$f"
  done
  echo "$flags"
}

prepare() {
  local chip="${1:-sm_90}"
  local t0=$SECONDS
  TFM_BUILD_DIR="$build" bash "$root/scripts/build.sh" transformer-runner \
    transformer-opt transformer-translate tfm-artifact-run tfm_cuda_runtime \
    >/dev/null
  rm -rf "$out"
  mkdir -p "$out"
  write_models
  echo "chip $chip" > "$out/target.txt"
  local runner="$build/bin/transformer-runner"

  numerics_cases | while read -r name model entry options atol rtol result extra; do
    local dir="$out/$name"
    mkdir -p "$dir/inputs"
    make_inputs "$out/models/$model.mlir" "$dir/inputs" "$entry"
    local inputs extra_flags=""
    inputs="$(input_flags "$dir")"
    [ -n "$extra" ] && extra_flags="--input $extra"
    # The reference: the CPU path, same weights (seed 1) and inputs.
    "$runner" "$out/models/$model.mlir" --entry "$entry" --random-weights 1 \
      $inputs $extra_flags --output "$result=$dir/ref.npy" --print-values 0 \
      >/dev/null
    "$py" -c "import numpy, sys; numpy.load(sys.argv[1]).astype(numpy.float32).tofile(sys.argv[2])" \
      "$dir/ref.npy" "$dir/ref.bin"
    local case_target
    read -r case_target options <<< "$(case_chip "$options" "$chip")"
    "$runner" "$out/models/$model.mlir" --entry "$entry" --random-weights 1 \
      $inputs $extra_flags --device cuda --chip "$case_target" \
      --pipeline-options="${options//,/ }" --emit-artifact "$dir/artifact" >/dev/null
    bash "$root/scripts/gpu-artifact.sh" "$dir/artifact" "$build" >/dev/null
    rm -rf "$dir/artifact/model.ll" "$dir/artifact/model.o" "$dir/inputs" \
      "$dir/ref.npy"
    echo "numerics $name $result $atol $rtol" >> "$out/cases.txt"
    echo "prepared $name"
  done

  # Timing cases: no data (random values on the device), FLOPs for TFLOP/s.
  timing() { # NAME MODEL ENTRY OPTIONS FLOPS TOKENS EXTRA
    local dir="$out/$1"
    mkdir -p "$dir/inputs"
    make_inputs "$out/models/$2.mlir" "$dir/inputs" "$3"
    local inputs extra_flags=""
    inputs="$(input_flags "$dir")"
    [ -n "${7:-}" ] && extra_flags="--input $7"
    local case_target options
    read -r case_target options <<< "$(case_chip "$4" "$chip")"
    "$runner" "$out/models/$2.mlir" --entry "$3" --random-weights 1 $inputs \
      $extra_flags --device cuda --chip "$case_target" \
      --pipeline-options="${options//,/ }" \
      --emit-artifact "$dir/artifact" --emit-artifact-data=0 >/dev/null
    bash "$root/scripts/gpu-artifact.sh" "$dir/artifact" "$build" >/dev/null
    rm -rf "$dir/artifact/model.ll" "$dir/artifact/model.o" "$dir/inputs"
    echo "timing $1 $5 $6" >> "$out/cases.txt"
    echo "prepared $1"
  }
  timing gemm-4096-f16 gemm-4096 forward dtype=f16 $((2 * 4096 * 4096 * 4096)) 0
  # The same GEMM as a TMA + wgmma kernel (sm_90a), next to the mma.sync one.
  timing gemm-4096-f16-sm90a gemm-4096 forward chip=sm_90a,dtype=f16 \
    $((2 * 4096 * 4096 * 4096)) 0
  # Diagnostic: each wgmma waits for all but itself.
  timing gemm-4096-f16-sm90a-serial gemm-4096 forward \
    chip=sm_90a,dtype=f16,debug=warpgroup-mma-overlap=0 $((2 * 4096 * 4096 * 4096)) 0
  # Matvecs: GB/s is 117.4 MB (the f16 weight) / time.
  timing matvec-nt-llama-f16 matvec-nt-llama forward dtype=f16 \
    $((2 * 14336 * 4096)) 0
  timing matvec-nn-llama-f16 matvec-nn-llama forward dtype=f16 \
    $((2 * 14336 * 4096)) 0
  for s in 512 1024 2048 4096 8192 16384; do
    for d in 64 128; do
      # Causal: 2 * 2 * H * S^2 * d / 2 FLOPs (the causal half of Q K^T and
      # P V), H = 2048 / d.
      timing "attn-s$s-d$d" "attn-s$s-d$d" forward dtype=f16 \
        $((2 * (2048 / d) * s * s * d)) 0
    done
  done
  # One decode step (split-KV), position 16000 of a 16384-position cache:
  # the time includes rounding the f32 cache to f16 (q/k/v conversion).
  timing attn-decode-s16384-d128 attn-decode-s16384-d128 forward dtype=f16 \
    0 1 position=16000
  timing gpt2-small-prefill gpt2-small prefill dtype=f16 0 128 position=0
  timing gpt2-small-decode gpt2-small decode dtype=f16 0 1 position=128
  echo "gpu-check prepare: $(du -sh "$out" | cut -f1) in $out, $((SECONDS - t0)) s"
}

# Packs what the GPU machine needs into $build/devcarry (about 36 MiB; the
# device tool carries at most 64 MiB with the working tree): the prepared
# cases as one gzip archive, the tool and the runtime library.
pack() {
  [ -f "$out/cases.txt" ] || { echo "no $out/cases.txt: run 'prepare' first"; exit 1; }
  rm -rf "$build/devcarry"
  mkdir -p "$build/devcarry"
  cp "$build/bin/tfm-artifact-run" "$build/lib/libtfm_cuda_runtime.so" "$build/devcarry/"
  tar czf "$build/devcarry/gpu-check.tgz" -C "$build" gpu-check
  echo "gpu-check pack: $(du -sh "$build/devcarry" | cut -f1) in $build/devcarry"
}

# On the GPU machine: unpacks $build/devcarry (from pack) into $build.
unpack() {
  mkdir -p "$build/bin" "$build/lib"
  cp "$build/devcarry/tfm-artifact-run" "$build/bin/"
  cp "$build/devcarry/libtfm_cuda_runtime.so" "$build/lib/"
  rm -rf "$out"
  tar xzf "$build/devcarry/gpu-check.tgz" -C "$build"
}

# Per-case limits: a kernel that hangs must not eat the device lease.
numerics_timeout="${TFM_GPU_CHECK_NUMERICS_TIMEOUT:-30}"
timing_timeout="${TFM_GPU_CHECK_TIMING_TIMEOUT:-90}"

run() {
  local tool="$build/bin/tfm-artifact-run" failed=0 summary=""
  [ -f "$out/cases.txt" ] || { echo "no $out/cases.txt: run 'prepare' first"; exit 1; }
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm \
    --format=csv || true
  echo "compiled for: $(cat "$out/target.txt")"
  while read -r kind name a b c; do
    local dir="$out/$name/artifact" log rc=0 status
    if [ "$kind" = numerics ]; then
      log="$(timeout "$numerics_timeout" "$tool" "$dir" --repeat 5 \
        --check "$a=$out/$name/ref.bin" --atol "$b" --rtol "$c" 2>&1)" || rc=$?
    else
      local flags=(--random --repeat 10)
      [ "$a" != 0 ] && flags+=(--flops "$a")
      # Whole models: also where the time goes, kernel by kernel.
      [ "$b" != 0 ] && flags+=(--profile)
      log="$(timeout "$timing_timeout" "$tool" "$dir" "${flags[@]}" 2>&1)" || rc=$?
      if [ "$b" != 0 ]; then
        local ms
        ms="$(echo "$log" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')"
        [ -n "$ms" ] && log="$log
$name: $(awk -v t="$b" -v ms="$ms" 'BEGIN { printf "%.1f tokens/s", t / (ms / 1000) }')"
      fi
    fi
    case "$rc" in
      0) status=ok ;;
      124) status=TIMEOUT ;;
      *) status=FAIL ;;
    esac
    [ "$rc" = 0 ] || failed=$((failed + 1))
    echo "== $name ($status)"
    echo "$log"
    local err ms tflops
    err="$(echo "$log" | sed -n 's/.*max abs err \([^,]*\), max rel err \([^,]*\),.*/abs \1 rel \2/p' | head -1)"
    ms="$(echo "$log" | sed -n 's/.*median \([0-9.]*\) ms.*/\1/p')"
    tflops="$(echo "$log" | sed -n 's/.*, \([0-9.]*\) TFLOP\/s.*/\1/p')"
    summary="$summary$(printf '%-30s %-7s %-28s %10s %8s' "$name" "$status" \
      "${err:--}" "${ms:--}" "${tflops:--}")
"
  done < "$out/cases.txt"
  echo
  printf '%-30s %-7s %-28s %10s %8s\n' case status "max error" "median ms" TFLOP/s
  printf '%s' "$summary"
  echo "gpu-check: $failed failed case(s)"
  return "$failed"
}

# compute-sanitizer over a few small cases (memcheck: out-of-bounds and
# misaligned accesses; racecheck: shared-memory races), when the machine has
# it. Informational: prints the tool's own summary lines.
sanitize() {
  local tool="$build/bin/tfm-artifact-run" cs
  cs="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)"
  [ -n "$cs" ] || { echo "sanitize: no compute-sanitizer"; return 0; }
  local check name
  for check in memcheck racecheck; do
    for name in flash-s77-d64-mha linear-matvec-nn-f16 linear-matvec-nt-f16 \
        linear-split-nt-f16 flash-s77-d128-gqa linear-m64-nt-f16-sm90a \
        linear-nt-f16 flash-decode-d64-mha; do
      [ -d "$out/$name" ] || continue
      echo "== compute-sanitizer --tool $check $name"
      timeout 120 "$cs" --tool "$check" "$tool" "$out/$name/artifact" \
        --repeat 1 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|error|Race|race" | head -8 || true
    done
  done
}

case "${1:-}" in
  prepare) prepare "${2:-sm_90}" ;;
  pack) pack ;;
  unpack) unpack ;;
  run) run || exit $? ;;
  sanitize) sanitize ;;
  *) echo "usage: $0 prepare [CHIP] | pack | unpack | run | sanitize"; exit 2 ;;
esac
