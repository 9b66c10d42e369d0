// Each option of --tfm-cpu-pipeline parses and changes what it says.
//
// fuse-qkv (default on): the Q/K/V weights become one concatenated parameter.
// RUN: transformer-opt %s --tfm-cpu-pipeline | FileCheck %s --check-prefix=FUSED
// RUN: transformer-opt %s --tfm-cpu-pipeline="fuse-qkv=false" | FileCheck %s --check-prefix=UNFUSED
// FUSED: llvm.func @_mlir_ciface_attn(
// FUSED-SAME: tfm.param_parts = ["q.weight", "k.weight", "v.weight"]
// UNFUSED: llvm.func @_mlir_ciface_attn(
// UNFUSED-SAME: {tfm.param = "q.weight"
// UNFUSED-SAME: {tfm.param = "k.weight"
// UNFUSED-SAME: {tfm.param = "v.weight"
// UNFUSED-NOT: tfm.param_parts
//
// flash-attention (default on, tiles 64/64): the attention becomes loops over
// query and key tiles; off, two batch matmuls around a softmax.
// RUN: transformer-opt %s --tfm-cpu-pipeline --mlir-print-ir-after=tfm-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLASH
// RUN: transformer-opt %s --tfm-cpu-pipeline="flash-attention=false" --mlir-print-ir-after=tfm-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFLASH
// RUN: transformer-opt %s --tfm-cpu-pipeline="flash-query-tile=2 flash-key-tile=4" --mlir-print-ir-after=tfm-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILES
// FLASH-NOT: linalg.batch_matmul
// FLASH: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c8
// FLASH-NOT: linalg.batch_matmul
// NOFLASH: linalg.batch_matmul
// NOFLASH-NOT: scf.for
// TILES-DAG: %[[C4:.*]] = arith.constant 4 : index
// TILES: scf.forall ({{.*}}) = (0, 0, 0) to (1, 2, 8) step (1, 1, 2)
// TILES: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %[[C4]]
// flash-causal-skip (default on): the key loop of a causal query tile ends at
// the tile's last position; off, it runs over every key tile. (Either way
// the tiles every row sees whole come first, in a loop of their own.)
// RUN: transformer-opt %s --tfm-cpu-pipeline="flash-query-tile=2 flash-key-tile=4" --mlir-print-ir-after=tfm-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=SKIP
// RUN: transformer-opt %s --tfm-cpu-pipeline="flash-query-tile=2 flash-key-tile=4 debug=flash-causal-skip=0" --mlir-print-ir-after=tfm-to-linalg -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOSKIP
// SKIP: %[[LAST:.*]] = arith.addi %{{.*}}, %c2 : index
// SKIP: %[[END:.*]] = arith.minsi %c8, %[[LAST]] : index
// SKIP: scf.for %{{.*}} = %{{.*}} to %[[END]] step %c4
// NOSKIP-NOT: arith.addi %{{.*}}, %c2 : index
// NOSKIP: scf.for %{{.*}} = %{{.*}} to %c8 step %c4
//
// pack-weights (default on): matmul weights are read in panel layout from
// arguments that say how to pack them; off, as the weight file has them.
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=znver3" | FileCheck %s --check-prefix=PACK
// RUN: transformer-opt %s --tfm-cpu-pipeline="pack-weights=false" | FileCheck %s --check-prefix=NOPACK
// PACK: llvm.func @_mlir_ciface_attn(
// PACK-SAME: {tfm.param = "o.weight", tfm.param_pack = {layout = "out_in", panel = 24 : i64, shape = array<i64: 32, 32>}}
// PACK-SAME: tfm.param_pack = {layout = "out_in", panel = 24 : i64, shape = array<i64: 96, 32>}
// NOPACK-NOT: tfm.param_pack
//
// parallel (default on): independent tiles run as OpenMP worksharing loops;
// off, as sequential loops (no omp ops, no OpenMP runtime calls).
// (This file's model is too small to be worth threads; GPT-2-small's block is.)
// RUN: transformer-opt %tfm_src/examples/gpt2-small-block.mlir --tfm-cpu-pipeline | FileCheck %s --check-prefix=PAR
// RUN: transformer-opt %tfm_src/examples/gpt2-small-block.mlir --tfm-cpu-pipeline="parallel=false" | FileCheck %s --check-prefix=SEQ
// RUN: transformer-opt %s --tfm-cpu-pipeline | FileCheck %s --check-prefix=SEQ
// PAR: omp.parallel
// PAR: omp.wsloop
// SEQ-NOT: omp.
//
// vectorize (default on): contractions become SIMD code; off, scalar loops.
// RUN: transformer-opt %s --tfm-cpu-pipeline | FileCheck %s --check-prefix=VEC
// RUN: transformer-opt %s --tfm-cpu-pipeline="debug=vectorize=0" | FileCheck %s --check-prefix=SCALAR
// RUN: transformer-opt %s --tfm-cpu-pipeline="debug=vectorize-elementwise=0 tiling=register-rows=2,register-cols=4,block-rows=4,block-cols=8,block-depth=4,dot-depth=4" | FileCheck %s --check-prefix=SMALL
// VEC: llvm.intr.fmuladd({{.*}}) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// SCALAR-NOT: vector<
// SMALL: llvm.intr.fmuladd({{.*}}) : (vector<4xf32>, vector<4xf32>, vector<4xf32>) -> vector<4xf32>
// SMALL-NOT: vector<16xf32>

// RUN: not transformer-opt %s --tfm-cpu-pipeline="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: no-such-option

// tiling: one value holding every override; a field it does not have, or a
// value that is no integer, is an error naming it.
// RUN: not transformer-opt %s --tfm-cpu-pipeline="tiling=register-rows=2,panel-rows=3" 2>&1 | FileCheck %s --check-prefix=BADFIELD
// RUN: not transformer-opt %s --tfm-cpu-configure="tiling=block-cols=wide" 2>&1 | FileCheck %s --check-prefix=BADVALUE
// RUN: transformer-opt %s --tfm-cpu-pipeline="tiling={register-rows=2}" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=PRINTED
// BADFIELD: unknown field 'panel-rows' (expected register-rows, min-register-rows, register-cols, block-rows, block-cols, block-depth, dot-cols, dot-depth, gemv-panels, amx-block-cols, amx-block-depth)
// RUN: not transformer-opt %s --tfm-cpu-configure="tiling={register-rows=2" 2>&1 | FileCheck %s --check-prefix=BADBRACE
// BADVALUE: field 'block-cols': bad value 'wide'
// BADBRACE: for the --tiling option: expected a closing '}'
// PRINTED: tfm-cpu-configure{{.*}}tiling={register-rows=2}

// debug: the switches for measuring one mechanism against its absence, one
// value; a field it does not have is an error, so is a bad choice.
// RUN: not transformer-opt %s --tfm-cpu-pipeline="debug=vectorise=0" 2>&1 | FileCheck %s --check-prefix=BADDEBUG
// RUN: not transformer-opt %s --tfm-cpu-pipeline="debug=amx-choice=bogus" 2>&1 | FileCheck %s --check-prefix=BADCHOICE
// RUN: not transformer-opt %s --tfm-cpu-pipeline="vectorize=0" 2>&1 | FileCheck %s --check-prefix=MOVED
// BADDEBUG: unknown field 'vectorise' (expected flash-causal-skip, vectorize, vectorize-elementwise, amx-choice, outline-loops, warpgroup-mma-overlap)
// BADCHOICE: choice must be measured, tiles or fma, not 'bogus'
// MOVED: no such option vectorize

func.func @attn(%x: tensor<1x8x32xf32> {tfm.input = "hidden"},
                %wq: tensor<32x32xf32> {tfm.param = "q.weight"},
                %wk: tensor<32x32xf32> {tfm.param = "k.weight"},
                %wv: tensor<32x32xf32> {tfm.param = "v.weight"},
                %wo: tensor<32x32xf32> {tfm.param = "o.weight"})
    -> (tensor<1x8x32xf32> {tfm.output = "hidden"}) {
  %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x8x32xf32>, tensor<32x32xf32>) -> tensor<1x8x32xf32>
  %k = tfm.linear %x, %wk {layout = #tfm.layout<out_in>} : (tensor<1x8x32xf32>, tensor<32x32xf32>) -> tensor<1x8x32xf32>
  %v = tfm.linear %x, %wv {layout = #tfm.layout<out_in>} : (tensor<1x8x32xf32>, tensor<32x32xf32>) -> tensor<1x8x32xf32>
  %qh = tfm.split_heads %q {num_heads = 2 : i64} : (tensor<1x8x32xf32>) -> tensor<1x2x8x16xf32>
  %kh = tfm.split_heads %k {num_heads = 2 : i64} : (tensor<1x8x32xf32>) -> tensor<1x2x8x16xf32>
  %vh = tfm.split_heads %v {num_heads = 2 : i64} : (tensor<1x8x32xf32>) -> tensor<1x2x8x16xf32>
  %a = tfm.attention %qh, %kh, %vh : (tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x2x8x16xf32>
  %m = tfm.merge_heads %a : (tensor<1x2x8x16xf32>) -> tensor<1x8x32xf32>
  %o = tfm.linear %m, %wo {layout = #tfm.layout<out_in>} : (tensor<1x8x32xf32>, tensor<32x32xf32>) -> tensor<1x8x32xf32>
  return %o : tensor<1x8x32xf32>
}
