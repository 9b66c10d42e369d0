// RUN: transformer-opt %s --tfm-cpu-configure=cpu=znver3 | FileCheck %s --check-prefix=AVX2
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=skylake-avx512 | FileCheck %s --check-prefix=AVX512
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=x86-64 | FileCheck %s --check-prefix=SSE
// RUN: transformer-opt %s --tfm-cpu-configure | FileCheck %s --check-prefix=HOST
// RUN: not transformer-opt %s --tfm-cpu-configure=cpu=no-such-cpu 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 tiling=register-rows=4,block-depth=64,dot-cols=8,gemv-panels=1" | FileCheck %s --check-prefix=OVERRIDE
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 tiling=register-rows=6,register-cols=16,min-register-rows=5" | FileCheck %s --check-prefix=MINROWS
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 tiling=register-rows=6,register-cols=16,min-register-rows=8" | FileCheck %s --check-prefix=MINROWS8
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids amx=1" | FileCheck %s --check-prefix=AMX
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids" | FileCheck %s --check-prefix=NOAMX
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 amx=1" | FileCheck %s --check-prefix=AVX2
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids amx=1 tiling=amx-block-cols=256,amx-block-depth=512" | FileCheck %s --check-prefix=AMXOVERRIDE
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 amx=1 tiling=amx-block-cols=256" | FileCheck %s --check-prefix=AVX2
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver5 amx=1" | FileCheck %s --check-prefix=ZEN5
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver5 amx=1 bf16-dot=1" | FileCheck %s --check-prefix=PAIRS
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids bf16-dot=1" | FileCheck %s --check-prefix=PAIRS
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids amx=1 bf16-dot=1" | FileCheck %s --check-prefix=AMX
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=skylake-avx512 bf16-dot=1" | FileCheck %s --check-prefix=NOPAIRS
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 bf16-dot=1" | FileCheck %s --check-prefix=NOPAIRS
// Every kind of x86 host's plan, checked on any machine: AVX2 (Haswell, the
// x86-64-v3 level), AVX-512 (Zen 4, the x86-64-v4 level), AMX above.
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=haswell | FileCheck %s --check-prefix=HASWELL
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=znver3 int8-dot=1" | FileCheck %s --check-prefix=INT8
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=cascadelake int8-dot=1" | FileCheck %s --check-prefix=INT8VNNI
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=x86-64 int8-dot=1" | FileCheck %s --check-prefix=NOINT8
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids amx=1 int8-dot=1" | FileCheck %s --check-prefix=AMXINT8
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=sapphirerapids int8-dot=1" | FileCheck %s --check-prefix=INT8NOTILES
// RUN: transformer-opt %s --tfm-cpu-configure="cpu=cascadelake amx=1 int8-dot=1" | FileCheck %s --check-prefix=INT8VNNI
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=x86-64-v3 | FileCheck %s --check-prefix=V3
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=znver4 | FileCheck %s --check-prefix=ZEN4
// RUN: transformer-opt %s --tfm-cpu-configure=cpu=x86-64-v4 | FileCheck %s --check-prefix=V4
// TFM_CPU names the CPU that "host" (the default) stands for; an explicit
// cpu= still wins.
// RUN: env TFM_CPU=haswell transformer-opt %s --tfm-cpu-configure | FileCheck %s --check-prefix=HASWELL
// RUN: env TFM_CPU=haswell transformer-opt %s --tfm-cpu-configure=cpu=host | FileCheck %s --check-prefix=HASWELL
// RUN: env TFM_CPU=haswell transformer-opt %s --tfm-cpu-configure=cpu=znver3 | FileCheck %s --check-prefix=AVX2
// RUN: env TFM_CPU=host transformer-opt %s --tfm-cpu-configure | FileCheck %s --check-prefix=HOST
// RUN: env TFM_CPU=no-such-cpu not transformer-opt %s --tfm-cpu-configure 2>&1 | FileCheck %s --check-prefix=BAD

// The tile plan follows the target's registers: 16 ymm registers (AVX2)
// hold a 4x24 register tile (12 accumulators, 3 B vectors, 1 broadcast:
// fewer loads per FMA than 6x16's 12 + 2 + 1); 32 zmm registers (AVX-512) a
// 6x64 one (24 + 4 + 1); 16 xmm registers (baseline x86-64, SSE, no FMA:
// one register holds each product before its add) a 6x8 one. Cache blocks follow the caches: the K slice keeps the A and B
// micro-panels in L1, the B block half of L2. `min_rows`: where the rows
// do not divide M, a shorter tile that does is taken down to two thirds of
// the rows and at least as many accumulators as the 8 FMAs in flight: 4 of
// AVX-512's 6 rows (4 x 64 has 16), 3 of AVX2's 4 (3 x 24 has 9), 4 of
// SSE's 6.
// The int8 kernels' prefetch distances follow their instruction set and
// the CPU's name (docs/design.md, "Int8 prefetch"). AVX2's kernels (also
// those of AVX-512 without VNNI): 8 KiB for the formats packed below a byte
// a step and none for the bytewise ones on Zen and the generic levels
// (AVX2, INT8, V3, V4), 2 KiB, not measured otherwise, on Intel's cores
// (HASWELL, AVX512). AVX-512 VNNI's: none on Zen (ZEN4, ZEN5), 2 KiB on
// Intel's (INT8VNNI).
// AVX2: module attributes {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "znver3", fma = true, int8_decode_vectors = 4 : i64, int8_dot = false, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}}
// AVX2: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 256, block_cols = 504, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 2>}
// AVX2: linalg.batch_matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, {{.*}}>}
// AVX2-NOT: linalg.generic {{.*}}tfm.cpu_tiling
// A contraction of bf16 (or f16) operands takes the f32 plan: its tiles read
// A's panels packed in f32 and B widened a vector at a time (or a K block at
// a time), no register more. A decode step's one-row tile reads as many
// weight panels at once as keep its accumulators within half the registers,
// at most 4: AVX2's panels of three vectors 2, AVX-512's of four 4.
// AVX2: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, {{.*}}gemv_panels = 2>} ins(%{{.*}}, %{{.*}} : tensor<12x40xbf16>, tensor<40x48xbf16>)
// AVX512: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "skylake-avx512", fma = true, int8_decode_vectors = 8 : i64, int8_dot = false, int8_prefetch_bytewise = 2048 : i64, int8_prefetch_packed = 2048 : i64, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}}
// AVX512: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4>}
// AVX512: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, {{.*}}>} ins(%{{.*}}, %{{.*}} : tensor<12x40xbf16>, tensor<40x48xbf16>)
// HASWELL: module attributes {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "haswell", fma = true, int8_decode_vectors = 4 : i64, int8_dot = false, int8_prefetch_bytewise = 2048 : i64, int8_prefetch_packed = 2048 : i64, l1_bytes = 32768 : i64, l2_bytes = 524288 : i64, vector_bits = 256 : i64, vector_registers = 16 : i64}}
// HASWELL: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 256, block_cols = 504, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 2>}
// V3: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "x86-64-v3", fma = true, int8_decode_vectors = 4 : i64, int8_dot = false, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64, {{.*}}vector_bits = 256 : i64, vector_registers = 16 : i64}}
// V3: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 256, block_cols = 504, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 2>}
// ZEN4: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = true, avx512_vnni = true, cpu = "znver4", fma = true, int8_decode_vectors = 4 : i64, int8_dot = false, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 0 : i64, l1_bytes = 49152 : i64, l2_bytes = 1048576 : i64, vector_bits = 512 : i64, vector_registers = 32 : i64}}
// ZEN4: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4>}
// V4: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "x86-64-v4", fma = true, int8_decode_vectors = 8 : i64, int8_dot = false, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64, {{.*}}vector_bits = 512 : i64, vector_registers = 32 : i64}}
// V4: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4>}
// SSE: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "x86-64", fma = false, int8_decode_vectors = 4 : i64, int8_dot = false, {{.*}}vector_bits = 128 : i64, vector_registers = 16 : i64}}
// SSE: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 8, min_rows = 4, {{.*}}>}
// HOST: tfm.cpu_target = {amx_bf16 = {{true|false}}, amx_int8 = {{true|false}}, avx512_bf16 = {{true|false}}, avx512_vnni = {{true|false}}, cpu = "{{.+}}"
// HOST: linalg.matmul {tfm.cpu_tiling
// Options override single fields of the derived plan; the rest stays
// (`min_rows` derived again for an overridden register tile, and never
// above its rows).
// OVERRIDE: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4, register_cols = 24, min_rows = 3, block_rows = 256, block_cols = 504, block_depth = 64, dot_cols = 8, dot_depth = 32>}
// MINROWS: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, min_rows = 5, {{.*}}>}
// MINROWS8: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 16, {{.*}}>}
// With `amx`, a CPU with AMX-BF16 (Sapphire Rapids) also gets the AMX form
// of f32 GEMMs planned (tfm-cpu-amx-contractions): B converted 128 columns
// at a time, K blocks whose converted B (3 x 256 x 128 bf16) fills a quarter
// of the typical 1 MiB L2. Without `amx`, or on a CPU without AMX (znver3
// above, with amx=1), nothing of it.
// AMX: {tfm.cpu_target = {amx_bf16 = true, amx_int8 = false, avx512_bf16 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true
// AMX: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4, amx_block_cols = 128, amx_block_depth = 256>}
// The AMX blocks can be overridden too, only where tiles are planned at all
// (znver3 with amx-block-cols: the AVX2 plan, no `amx`).
// AMXOVERRIDE: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<{{.*}}block_rows = 256, block_cols = 1024, block_depth = 128, {{.*}}amx_block_cols = 256, amx_block_depth = 512
// NOAMX: {tfm.cpu_target = {amx_bf16 = true, amx_int8 = false, avx512_bf16 = true, avx512_vnni = true, cpu = "sapphirerapids"
// NOAMX-NOT: amx = array
// AMD Zen 5 (EPYC Turin): AVX-512 and AVX512-BF16 but no AMX, so the
// AVX-512 plan even with `amx` asked for.
// ZEN5: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = true, avx512_vnni = true, cpu = "znver5", fma = true, int8_decode_vectors = 4 : i64, int8_dot = false, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 0 : i64, {{.*}}vector_bits = 512 : i64, vector_registers = 32 : i64}}
// ZEN5: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4>}
// ZEN5-NOT: amx = array
// ZEN5-NOT: bf16_pairs
// With `bf16-dot`, a 512-bit CPU with AVX512-BF16 on which no AMX tiles are
// planned (Zen 4/5; Sapphire Rapids without `amx`) plans bf16 GEMMs as pair
// dot products (tfm-cpu-pack-weights interleaves their weights' K pairs);
// with AMX planned (AMX above: no bf16_pairs) bf16 GEMMs go to the tiles,
// and Skylake (no AVX512-BF16) or an AVX2 CPU plan none.
// PAIRS: tfm.cpu_target = {{{.*}}avx512_bf16 = true
// PAIRS: linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 6, register_cols = 64, min_rows = 4, block_rows = 256, block_cols = 1024, block_depth = 128, dot_cols = 4, dot_depth = 32, gemv_panels = 4, bf16_pairs = true>}
// NOPAIRS-NOT: bf16_pairs
// AMX-NOT: bf16_pairs
// BAD: error: tfm-cpu-configure: cpu 'no-such-cpu' is not a CPU LLVM knows

func.func @contractions(%a: tensor<12x40xf32>, %b: tensor<40x48xf32>, %c: tensor<12x48xf32>,
                        %qa: tensor<2x8x16xf32>, %qb: tensor<2x16x8xf32>, %qc: tensor<2x8x8xf32>,
                        %x: tensor<12x48xf32>) -> (tensor<12x48xf32>, tensor<2x8x8xf32>, tensor<12x48xf32>) {
  %0 = linalg.matmul ins(%a, %b : tensor<12x40xf32>, tensor<40x48xf32>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
  %1 = linalg.batch_matmul ins(%qa, %qb : tensor<2x8x16xf32>, tensor<2x16x8xf32>) outs(%qc : tensor<2x8x8xf32>) -> tensor<2x8x8xf32>
  // Not a contraction: no plan.
  %2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<12x48xf32>) outs(%c : tensor<12x48xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<12x48xf32>
  return %0, %1, %2 : tensor<12x48xf32>, tensor<2x8x8xf32>, tensor<12x48xf32>
}

func.func @half_contraction(%a: tensor<12x40xbf16>, %b: tensor<40x48xbf16>, %c: tensor<12x48xf32>) -> tensor<12x48xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<12x40xbf16>, tensor<40x48xbf16>) outs(%c : tensor<12x48xf32>) -> tensor<12x48xf32>
  return %0 : tensor<12x48xf32>
}

// int8-dot (the CPU pipeline's default; see tfm-cpu-pack-weights): int8
// activations for quantized weights where the target has int8 dot
// products -- AVX2's vpmaddubsw (Zen 3), AVX-512 VNNI (Cascade Lake) --
// never on a baseline x86-64 (SSE2) target. Their decode GEMV accumulates
// one row in `int8_decode_vectors` vectors: 8 on Intel's AVX-512 (two
// 64-column panels streamed at once), 4 on AMD's Zen cores (one panel;
// ZEN4, ZEN5 above) and with AVX2.
// INT8: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = false, cpu = "znver3", fma = true, int8_decode_vectors = 4 : i64, int8_dot = true, int8_prefetch_bytewise = 0 : i64, int8_prefetch_packed = 8192 : i64,
// INT8VNNI: {tfm.cpu_target = {amx_bf16 = false, amx_int8 = false, avx512_bf16 = false, avx512_vnni = true, cpu = "cascadelake", fma = true, int8_decode_vectors = 8 : i64, int8_dot = true, int8_prefetch_bytewise = 2048 : i64, int8_prefetch_packed = 2048 : i64,
// NOINT8: {tfm.cpu_target = {{.*}}int8_dot = false,
// With `amx` too, a CPU with AMX-INT8 (Sapphire Rapids) runs their prefill
// on int8 tiles (amx_int8; tfm-cpu-lower-quantized-matmuls); not without
// `amx`, nor on Cascade Lake (VNNI without tiles; INT8VNNI above, amx=1).
// AMXINT8: {tfm.cpu_target = {amx_bf16 = true, amx_int8 = true, avx512_bf16 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_decode_vectors = 8 : i64, int8_dot = true,
// INT8NOTILES: {tfm.cpu_target = {amx_bf16 = true, amx_int8 = false, avx512_bf16 = true, avx512_vnni = true, cpu = "sapphirerapids", fma = true, int8_decode_vectors = 8 : i64, int8_dot = true,
