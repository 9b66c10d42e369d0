//===- Passes.td - Codegen passes of the CPU pipeline ------*- tablegen -*-===//
//
// Steps of `--tfm-cpu-pipeline` (tfm/Pipelines/Pipelines.h): the target
// configuration, weight packing, register-tiled and AMX contractions,
// elementwise vectorization, outlining and the lowering to LLVM.
// Registered so that tests can run each alone and
// `--mlir-print-ir-after=<argument>` can name it.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_CPU_PASSES_TD
#define TFM_CODEGEN_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmCpuConfigure : Pass<"tfm-cpu-configure", "ModuleOp"> {
  let summary = "Derives contraction tile sizes from the target CPU and "
                "records them (tfm.cpu_target on the module, tfm.cpu_tiling "
                "on each contraction)";
  let description = [{
    The policy half of CPU code generation (as IREE's LLVMCPU
    KernelDispatch): looks up the target CPU (`cpu`, default the host),
    derives contraction tile sizes from its vector width, register count and
    caches, and records both in the IR:

    ```
    module attributes {tfm.cpu_target = {cpu = "znver3", vector_bits = 256,
                       vector_registers = 16, l1_bytes = .., l2_bytes = ..}}
    linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4,
                   register_cols = 24, min_rows = 3, block_rows = M,
                   block_cols = N, block_depth = K, dot_cols = 4,
                   dot_depth = 32, gemv_panels = 2>}
    ```

    (`#tfm.cpu_tiling` is a typed attribute of the tfm dialect, verified
    when built or parsed; its fields: tfm/Dialect/Tfm/IR/TfmAttrs.td.)

    `min_rows` is the fewest rows of a shorter register tile taken where
    the planned rows do not divide M (512 rows in 4-row tiles rather than
    6-row tiles and a 2-row remainder): at least two thirds of the planned
    rows, and at least as many accumulators as the 8 FMAs a core keeps in
    flight (4 for AVX-512's 6 x 64 tile, 3 for AVX2's 4 x 24).

    `gemv_panels` is how many panels of a packed weight a one-row register
    tile (a decode step's GEMV) reads at once, each a sequential stream:
    as many as keep the accumulators within half the registers, at most 4
    (AVX-512's 64-column panels: 4; AVX2's 24-column f32 panels: 2).

    The mechanism (`tfm-tile-and-vectorize-contractions`) only reads these
    attributes, so tests check the plan for any named CPU without running
    on it. The `tiling` option overrides single fields of the derived
    tiling (0: as derived).
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"host\"",
           "LLVM CPU name, or 'host'">,
    Option<"tiling", "tiling", "::mlir::tfm::CpuTilingOverrides",
           /*default=*/"",
           "Overrides of single fields of the derived tiling, "
           "`name=value,...` (0: as derived): register-rows, "
           "min-register-rows, register-cols, block-rows, block-cols, "
           "block-depth, dot-cols, dot-depth, gemv-panels, amx-block-cols, "
           "amx-block-depth (CpuTilingOverrides in "
           "tfm/Codegen/CPU/CpuTarget.h says what each is)">,
    Option<"amx", "amx", "bool", /*default=*/"false",
           "Plan f32 GEMMs on AMX tiles as six bf16 products where the "
           "target has AMX-BF16 (the `amx` field of tfm.cpu_tiling; see "
           "tfm-cpu-amx-contractions), and the prefill of GEMMs on int8 "
           "activations on AMX-INT8 tiles where it has those (`amx_int8` "
           "in tfm.cpu_target; see tfm-cpu-lower-quantized-matmuls)">,
    Option<"bf16Dot", "bf16-dot", "bool", /*default=*/"false",
           "Plan bf16 GEMMs as AVX512-BF16 pair dot products where the "
           "target has them, 512-bit vectors and no AMX plan (the "
           "`bf16_pairs` field of tfm.cpu_tiling; see "
           "tfm-cpu-pack-weights)">,
    Option<"int8Dot", "int8-dot", "bool", /*default=*/"false",
           "Run GEMMs over Q8_0/Q4_0 weights on int8 activations (quantized "
           "per block of 32, summed by int8 dot products) where the target "
           "has them (`int8_dot` in tfm.cpu_target; see "
           "tfm-cpu-pack-weights)">,
  ];
  // The plan it writes is a #tfm.cpu_tiling.
  let dependentDialects = ["linalg::LinalgDialect", "tfm::TfmDialect"];
}

def TfmCpuPackWeights : Pass<"tfm-cpu-pack-weights", "ModuleOp"> {
  let summary = "Makes matmuls read their weight parameters in the register "
                "tile's panel layout (packed once when weights are bound)";
  let description = [{
    After `tfm-cpu-configure`, before tiling: every matmul
    `C[m, n] += A[m, k] * W` with an f32 accumulator C and A, W both f32,
    bf16 or f16, whose W is a weight parameter (`[K, N]`, in_out, or
    `[N, K]`, out_in, nn.Linear), reads W instead from a new parameter in
    panel layout `P[j, k, r] = W(k, j * nr + r)` (0 where `j * nr + r >= N`)
    of type `tensor<ceil(N / nr) x K x nr>`, nr being the register tile's
    columns (`tfm.cpu_tiling`). A register tile then reads B with unit
    stride, and no weight is ever transposed per call.

    With `bf16_pairs` in the plan (`tfm-cpu-configure bf16-dot=1` on a CPU
    with AVX512-BF16), a bf16 weight of even K is packed with its K pairs
    interleaved instead, `P[j, k / 2, r, k % 2] = W(k, j * nr + r)` of type
    `tensor<ceil(N / nr) x K/2 x nr x 2 x bf16>`: one 64-byte load holds the
    pairs of 16 columns that one `vdpbf16ps` multiplies. A is read as
    `[M, K/2, 2]` and the matmul becomes a generic over (m, j, r, q, t), k
    = 2 q + t; `tfm.param_pack` adds `format = "bf16_pairs"`.

    A weight held quantized (`tfm.param_quant`: Q8_0, Q4_0, Q4_K, Q5_K,
    Q6_K) is read
    from its values and scales in panels of the micro-kernel's width
    (formats `q8_0_values`/`q8_0_scales`, `q4_0_values`/`q4_0_scales`, and
    Q4_K's three parts `q4_k_values`/`q4_k_scales` (each sub-block's 6-bit
    scale and min)/`q4_k_super` (each super-block's f16 d and dmin)) by a
    generic marked `tfm.quantized_matmul`; a Q4_K weight is
    `d * sc * q - dmin * m` exactly as llama.cpp dequantizes it. Q6_K's
    three parts: `q6_k_values` (its 6-bit q a byte a K step, as Q8_0's;
    with `int8_dot`, in 6 bits: two quads of low nibbles after the quad of
    their high 2 bits, `[J, K/32, 6, P, 4]`),
    `q6_k_super` (each super-block's f16 d) and `q6_k_scales` (the signed
    scale of each 16 steps): `(d * sc) * (q - 32)`. Q5_K's values as
    Q6_K's (a 5-bit q a byte), its scales as Q4_K's. With `int8_dot` in
    `tfm.cpu_target` (tfm-cpu-configure) its activations are int8: a
    reduction computes each row's largest magnitude per block of 32 along K,
    the generic (marked `tfm.int8_activations`) multiplies the activation
    quantized with it (`d = amax / 127`, `roundeven(a / d) * d`) by the
    dequantized weight, and the values are packed four K steps of a column
    together (`group = 4`: `[J, K/32, 8 | 4 | 6, P, 4]`), an int8 dot product's
    lane; on AVX-512 VNNI the two-steps-a-byte formats (Q4_0, Q4_K) take
    panels twice as wide (64 columns), a panel's block 1 KiB of values as
    for the byte formats, and on AVX2 every format takes 32 columns (the
    decode tile's width). Without it the activations stay f32 and the result is exactly the
    dequantized weights' (`[J, K/32, 32 | 16, P]`). A matmul whose weight
    an `scf.index_switch` picks among quantized weights held alike
    (`tfm.moe`'s experts) reads the parts that a switch beside it picks
    among their packed parts; the original switch keeps only the results
    something else still reads.

    The new argument keeps the parameter's `tfm.param` (and
    `tfm.param_parts`) and records the packing for whoever binds weights:
    `tfm.param_pack = {layout = "in_out" | "out_in", panel = nr, shape =
    array<i64: K, N> | array<i64: N, K>}`. The original argument is erased
    when nothing else reads it.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
}

def TfmCpuSplitAmxWeights : Pass<"tfm-cpu-split-amx-weights", "ModuleOp"> {
  let summary = "Binds the weights of AMX GEMMs as the bf16 parts their "
                "tiles read, split once when weights are bound instead of "
                "on every call";
  let description = [{
    After `tfm-cpu-pack-weights`, in the signature stage. A packed f32
    weight `P[J, K, panel]` that only GEMMs planned for AMX tiles read (as
    `tfm-cpu-amx-contractions` matches them), in every function of the
    module that binds a parameter of its name, becomes an argument of type
    `tensor<3 x J*panel/16 x K/2 x 32 x bf16>` holding the three bf16 parts
    of each weight in the order AMX tiles load B:
    `S[i, n/16, k/2, 2*(n%16) + k%2]` = part i of `W(k, n)`, where
    `w = w0 + w1 + w2`, `w0 = bf16(w)`, `w1 = bf16(w - w0)`,
    `w2 = bf16(w - w0 - w1)`, and 0 for padding columns. Its
    `tfm.param_pack` gains `format = "amx_bf16x3"`, and the binder splits
    the weight once. The AMX code then loads B's tiles from it directly;
    the conversion of B it otherwise makes on every call took about a third
    of the GEMMs' time at 128 rows.

    Each GEMM becomes a generic over `(m, j, rc, x, q, t)` (column
    `n = j*panel + 16*rc + x`, row `k = 2*q + t`) computing
    `C[m, j, rc, x] += A[m, q, t] * (S0 + S1 + S2)[j, rc, q, x, t]`: the
    parts add up to the weight exactly, so it is the same f32 GEMM, and as
    loops it computes the same product. It is marked
    `tfm.amx_weight_parts`. A packed bf16 weight (a bf16 model's) is bound
    the same way as one part, the weight itself in tiles' order
    (`tensor<1 x ...>`, `format = "amx_bf16"`), and its GEMM reads it with
    A as `[M, K/2, 2]` bf16.

    A weight that anything else reads (a decode entry's one-row GEMV, a
    tied embedding's gather, the last panel of an LM head, a GEMM of fewer
    than 64 rows) keeps its f32 panels, so that it is bound once; AMX GEMMs
    then split it per call. The CPU pipeline runs this pass with `amx` and
    `amx-choice=tiles` (the FMA path of the other choices reads f32 panels)
    unless `amx-split-weights=0`.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
}

def TfmTileAndVectorizeContractions
    : Pass<"tfm-tile-and-vectorize-contractions", "func::FuncOp"> {
  let summary = "Tiles f32 contractions into cache blocks and register "
                "tiles, vectorises the register tiles and applies each "
                "contraction's elementwise epilogue (bias, activation, "
                "gating, residual) to each cache block after its K loop";
  let description = [{
    On tensors, before bufferization. Every f32 contraction that carries a
    `tfm.cpu_tiling` plan (`tfm-cpu-configure`) -- `linalg.matmul` and its
    transposed-B form, the batch matmuls of attention, the Q K^T / P V
    generics of flash attention -- is

    1. given a B operand whose innermost dimension is the output's vector
       dimension N (a transposed B is transposed into a fresh tensor);
    2. tiled into cache blocks (M, N, K) and, inside, register tiles of
       `registerRows x registerCols` with a K step of 1;
    3. vectorised into a `vector.contract` per register tile, whose
       accumulator transfer pair is hoisted out of the K loop;
    4. followed, inside each cache block, by its elementwise epilogue (bias
       add, activation, gating product, residual add).

    Extents the register tile does not divide are split: the bulk gets the
    full tile, the remainder a tile of its own. Fewer than 16 rows against
    a transposed B (decode's projections) take a dot-product form instead:
    partial sums in a vector over K, reduced once at the end.

    A bf16 GEMM in `tfm-cpu-pack-weights`' K-pair form (`bf16_pairs` in the
    plan: AVX512-BF16) steps K a pair at a time, each accumulator vector
    updated by one `x86vector.avx512.dot` (`vdpbf16ps`). A bf16 contraction
    in a loop whose B is a `[K, N]` slice of a tensor made outside the loops
    (flash attention's Q K^T, key tiles of K^T; its P V, value tiles of V at
    a key offset that is provably even) is brought into that form too: the
    tensor is copied once, before the loops, into K pairs.
  }];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "linalg::LinalgDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "ub::UBDialect",
                           "vector::VectorDialect",
                           "x86vector::X86VectorDialect"];
}

def TfmCpuLowerQuantizedMatmuls
    : Pass<"tfm-cpu-lower-quantized-matmuls", "ModuleOp"> {
  let summary = "Runs GEMMs over quantized weights as calls of their "
                "micro-kernel";
  let description = [{
    On buffers, after bufferization and before the workspace is planned.
    Each GEMM `tfm-cpu-pack-weights` made of a matmul over Q8_0 weights
    (marked `tfm.quantized_matmul = "q8_0"`),

    ```
    C[m, j, r] += A[m, b, t] * (sitofp(V[j, b, t, r]) * extf(S[j, b, r]))
    ```

    becomes an `scf.forall` over blocks of 128 of C's columns (whole
    panels), each calling the Q8_0 micro-kernel for the target's
    instruction set (`tfm.cpu_target`: `tfm_q8_0_matmul_avx512` where it has
    512-bit vectors, `_avx2` with 256-bit vectors and FMA, `_sse2` else;
    tfm/Runtime/Kernels.h) on the operands' memrefs (the C interface,
    `llvm.emit_c_interface`). The forall's blocks are the threads' work
    (OpenMP, like a GEMM's cache blocks), and because the memrefs are the
    call's operands the workspace plan and deallocation see them in use.

    On int8 activations (`tfm.int8_activations`) the GEMM first quantizes
    A's rows once, `tfm_int8_quantize_rows_<isa>` into three buffers (int8
    values, per-block scales and sums), and the column blocks call
    `tfm_q8_0_int8_matmul_<isa>` / `tfm_q4_0_int8_matmul_<isa>` /
    `tfm_q<format>_int8_matmul_<isa>` of the K formats on them
    (`avx512`: AVX-512 VNNI; `avx2`: AVX2, also on AVX-512 targets without
    VNNI; `amx`: AMX-INT8 tiles, where the target has them (`amx_int8`)
    and A has enough rows for tiles to pay: 8 for Q8_0 and Q5_K, 32 for
    the nibble formats, whose panels the kernel first unpacks, and Q6_K,
    whose scales per 16 K steps take two tile products a block).

    A GEMM whose A or C rows are not unit-stride, or whose V and S are not
    contiguous, or one on f32 activations in panels wider than 32 columns
    (the f32 kernels' widest), is left to loops (slow; on int8 activations the same
    function up to the order of its roundings).
  }];
  let dependentDialects = ["arith::ArithDialect", "func::FuncDialect",
                           "memref::MemRefDialect", "scf::SCFDialect"];
}

def TfmCpuAmxContractions : Pass<"tfm-cpu-amx-contractions", "ModuleOp"> {
  let summary = "Runs f32 GEMMs planned for AMX (`amx` in tfm.cpu_tiling) "
                "on AMX tiles as six bf16 products (bf16x6), and bf16 GEMMs "
                "as one";
  let description = [{
    On buffers, after bufferization and before the workspace is planned.
    Each outermost packed GEMM `C[m, j, r] += A[m, k] * P[j, k, r]`
    (`tfm-cpu-pack-weights`' form, all f32) whose plan has an `amx` field
    and whose K and N are multiples of 32 and M at least 64 (fewer rows do
    not pay for B's conversion on every call) is replaced by code on AMX
    tiles:

    - every f32 operand x is split into three bf16 parts x = x0 + x1 + x2
      (x0 = bf16(x), x1 = bf16(x - x0), x2 = bf16(x - x0 - x1)), which hold
      its 24 significant bits;
    - a product a * b is computed as the six bf16 products with
      i + j <= 2 (a0 b0 + a0 b1 + a1 b0 + a0 b2 + a1 b1 + a2 b0), each exact
      in the f32 accumulator; the three dropped ones are below 2^-24
      |a b|. This is "bf16x6" of Henry, Tang and Heinecke, "Leveraging the
      bfloat16 Artificial Intelligence Datatype For Higher-Precision
      Computations" (2019): about as accurate as an f32 GEMM, and on AMX
      (16 x 16 x 32 bf16 multiply-adds per instruction) faster than FMA;
    - A is split once per call into the workspace; B is split per block of
      `amx[0]` columns and `amx[1]` rows of K, by the thread that owns the
      block (blocks are an scf.forall: threads share them), into a buffer of
      that thread's (`omp_get_thread_num()`; one buffer without `parallel`);
      or, for a GEMM in `tfm-cpu-split-amx-weights`' form (B bound as its
      three parts), B's tiles are loaded from the parts as bound: no
      conversion, no buffer, and tiles whatever the `choice`;
    - a bf16 GEMM (A and P bf16, C f32: a bf16 model's) is one part per
      operand: A copied into tile order, B's K pairs interleaved (or bound
      so), one tile multiply per pair of tiles (exact products, f32 sums),
      and tiles whatever the `choice` (the FMA code below reads f32);
    - a 32 x 32 block of C is four 16 x 16 f32 tiles, loaded, multiplied
      with 2 A and 2 B tiles per part pair over 32 steps of K, and stored;
      the last M % 32 rows use tiles of fewer rows, in a function of their
      own that LLVM must not inline (it gives each tile register one shape
      per function, and the 32-row blocks use all eight).
    - with `choice=measured` (not the default) each thread times its blocks on
      tiles and, alternatively, with f32 FMAs (A copied once per call into
      strips of 12 rows; 12 x 32 register tiles over the packed panels) and
      takes the cheaper, timing the other again every 32 blocks. A core's
      tile unit shared with another hardware thread (another tenant's, on a
      cloud VM) can run at half rate or less, and then FMA is faster. The
      cycle counts are kept per kernel and thread in a `memref.global`
      across calls. Which path made a block, and so its last bits, then
      depends on the load; `choice=tiles` (the default) gives the same bits
      on every run and thread count, `choice=fma` only the FMA code.

    Anything else keeps the FMA path of `tfm-tile-and-vectorize-contractions`
    (which skips exactly the ops this pass takes). Needs a CPU with
    AMX-BF16 and AVX512-BF16 and Linux's permission to use tile data, which
    the code asks for itself (an `arch_prctl` system call before each GEMM),
    so it runs in any process.
  }];
  let options = [
    Option<"parallel", "parallel", "bool", /*default=*/"true",
           "The column blocks run on OpenMP threads (the pipeline's "
           "`parallel`): each thread converts B into its own buffer, "
           "indexed by omp_get_thread_num(); off: one buffer, no OpenMP "
           "calls">,
    Option<"choice", "choice", "std::string", /*default=*/"\"tiles\"",
           "Per block of columns: `tiles` (always; the same bits on every "
           "run and thread count), `measured` (each thread times both paths "
           "and takes the cheaper, trying the other again every 32 blocks) "
           "or `fma` (f32 FMAs from the unsplit operands)">,
  ];
  let dependentDialects = ["affine::AffineDialect", "amx::AMXDialect",
                           "arith::ArithDialect", "func::FuncDialect",
                           "LLVM::LLVMDialect",
                           "memref::MemRefDialect",
                           "scf::SCFDialect", "vector::VectorDialect"];
}

def TfmScheduleBlockLoops : Pass<"tfm-schedule-block-loops"> {
  let summary = "Gives OpenMP loops whose iterations run contraction "
                "register tiles a dynamic schedule";
  let description = [{
    After `convert-scf-to-openmp`: an `omp.wsloop` whose body multiplies
    register tiles (`vector.contract`, `vector.fma`, `x86vector.avx512.dot`,
    `amx.tile_mulf`: GEMM cache blocks, flash attention's query tiles,
    decode's GEMV column groups, the column blocks of
    `tfm-cpu-amx-contractions`) gets `schedule(dynamic)`, so that a thread
    that is free takes the next block instead of each thread running an
    equal static share. On a shared machine threads do not run at equal
    speed (another tenant on the same core, a vCPU descheduled by the
    hypervisor, a core's AMX unit shared with another tile user), and with
    static shares every thread waits for the slowest. Loops of more than 32
    iterations are handed out in 32 chunks (`schedule(dynamic, n)`), so that
    small iterations cost few dispatches. Each block is computed whole by
    one thread in one order, so results do not depend on the schedule.
    Other loops (elementwise, reductions, copies) keep the static schedule.
  }];
  let dependentDialects = ["arith::ArithDialect", "omp::OpenMPDialect"];
}

def TfmVectorizeElementwise : Pass<"tfm-vectorize-elementwise", "ModuleOp"> {
  let summary = "Vectorises elementwise generics along their innermost loop "
                "and row reductions as partial sums (width from "
                "tfm.cpu_target)";
  let description = [{
    On tensors, after the contraction code generator: the `linalg.generic`
    ops that are not contractions (bias adds, activations, residual adds,
    RoPE, norms, softmax and the online-softmax steps of flash attention)
    become vector code along their innermost loop:

    - innermost loop parallel (elementwise): every other loop is tiled by 1
      and the innermost by the vector width (two registers' worth of lanes
      from `tfm.cpu_target`); a remainder gets a tile of its own size;
    - innermost loop a reduction (row max, row sum, mean and variance): the
      other loops are tiled by 1 and the row reduced as partial sums, one
      vector wide, combined once at the end.

    Rows of an op outside any parallel loop are an `scf.forall` (threads).
    Only ops whose operands all read the innermost loop with unit stride
    (or not at all: broadcasts) are vectorised that way.

    `linalg.transpose` ops (the attention heads split and merged, K
    transposed for the scores, the GEMMs' A panels) become generics first.
    One that keeps the innermost dimension in place is a copy of contiguous
    rows (elementwise, as above). One that moves it is tiled in squares of
    up to lanes x lanes (powers of two dividing both dimensions, at least
    4 x 4), each read as rows of the input and written as rows of the
    output through a register transpose; the squares (or, with no square,
    the scalar elements) are an `scf.forall` when there are at least 16 of
    them and 2^16 elements. The rest stay scalar loops.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "scf::SCFDialect",
                           "tensor::TensorDialect", "vector::VectorDialect"];
}

def TfmOutlineLoopNests : Pass<"tfm-outline-loop-nests", "ModuleOp"> {
  let summary = "Outlines each top-level loop nest into a private no-inline "
                "function (bounds LLVM compile time on whole models)";
  let description = [{
    On buffers: moves every top-level op with a body (loops, parallel
    regions, linalg ops left for loops) of a function with many of them
    (at least 16) into a private function marked `tfm.outlined_loop_nest`
    (made `no_inline` by `tfm-finalize-outlined-loops`). A whole model
    lowers to one function with thousands of loops in sequence, and LLVM's
    O3 spends time quadratic in the number of loops on it; a call per loop
    nest costs nothing measurable at run time. Constants are cloned into
    the outlined functions, not passed as arguments.

    With `tensors`, before bufferization: only the top-level `scf.for` and
    `scf.forall` nests (the tiled, vectorised code of
    `tfm-tile-and-vectorize-contractions` and `tfm-vectorize-elementwise`)
    are outlined, as functions of tensors whose results are the loops'
    results; linalg ops left for later passes on buffers stay where they
    are. With `tfm-deduplicate-outlined-functions` after it, bufferization
    then analyses one copy of each distinct nest instead of one per layer
    (its analysis grows faster than linearly in a function's size). Each
    call's destination tensors are its arguments, and one-shot bufferization
    across function boundaries writes them in place
    (`drop-equivalent-buffer-results` removes the returned buffers).
  }];
  let options = [
    Option<"tensors", "tensors", "bool", /*default=*/"false",
           "Before bufferization: outline the top-level scf.for and "
           "scf.forall nests as functions of tensors">,
  ];
  let dependentDialects = ["func::FuncDialect", "scf::SCFDialect"];
}

def TfmSequentialSmallForalls : Pass<"tfm-sequential-small-foralls"> {
  let summary = "Turns scf.forall loops of fewer than 4 iterations into "
                "scf.for";
  let description = [{
    On buffers, before the OpenMP conversion: waking the other threads for
    two iterations (flash attention of a decode step of a model with two
    key/value heads, say) costs more than the iterations themselves. The
    GEMM and elementwise code generators already decide from their work
    whether to emit a forall at all; flash attention's tile loop cannot
    (its key loop's length is dynamic).
  }];
}

def TfmHoistLoopScratch : Pass<"tfm-hoist-loop-scratch"> {
  let summary = "Allocates the scratch buffers of loop bodies once per "
                "thread instead of once per iteration";
  let description = [{
    On buffers, after the deallocation pipeline and the OpenMP conversion:
    flash attention allocates its per-tile scratch (a key tile's scores, a
    query tile's running maximum and sum: 32 bytes to a few hundred KiB)
    inside its tile loops, and the deallocation pipeline frees each at the
    end of its iteration -- a malloc and a free per buffer per tile,
    thousands per decode step of a 22-layer model, and page faults where
    the allocator maps large ones afresh. A buffer whose contents and
    address stay in the iteration that allocates it (it and its views are
    neither yielded nor carried, returned, turned into an address, nor
    passed to a call that may keep it) is as good reused by every
    iteration, so each such static `memref.alloc` inside a loop moves to
    the entry of the code one thread runs, and its `memref.dealloc`s go:

    - in an `omp.parallel` region (a worksharing loop's body): the region is
      outlined into the function each thread runs, so one buffer a thread;
    - elsewhere, to the function's entry: one a call, as no loop between
      the two runs its iterations at the same time (an `scf.forall` or
      `scf.parallel` still there disqualifies the buffer).

    Buffers of at most 16 KiB become a `memref.alloca`, up to 64 KiB a
    scope, so that an OpenMP worker's stack (libomp's default 4 MiB) is
    never at risk; larger ones up to 1 MiB stay on the heap, allocated at
    the entry and freed before the scope's terminator (hoisted, the scratch
    of different loops is live at once; above that, a malloc per iteration
    is small beside the work that fills the buffer). Not the nearest
    `AutomaticAllocationScope`: `scf.for` is one, but an alloca in a loop
    body lowers to stack that grows with each iteration.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
}

def TfmInlineAllocaScopes : Pass<"tfm-inline-alloca-scopes"> {
  let summary = "Inlines memref.alloca_scope ops that scope no alloca";
  let description = [{
    `convert-scf-to-openmp` wraps each worksharing loop body in a
    `memref.alloca_scope` so that stack allocations in the body are freed
    per iteration. tfm's bodies put no `memref.alloca` there (their scratch
    is on the heap or, by tfm-hoist-loop-scratch, at the parallel region's
    entry) -- but the scopes must stay single-block, and lowering the scf
    loops inside them to control flow would break that. This pass inlines
    every `alloca_scope` with no alloca directly in it (nested scopes keep
    their own).
  }];
}

def TfmLowerVectors : Pass<"tfm-lower-vectors", "func::FuncOp"> {
  let summary = "Lowers vector contractions to vector.fma and n-D transfers "
                "to 1-D loads and stores";
  let description = [{
    On buffers: `vector.contract` becomes outer products and then
    `vector.fma`, n-D transfers 1-D loads and stores, and the rest of the
    vector dialect the 1-D form `convert-vector-to-llvm` emits as SIMD
    instructions. Multi-reductions along the innermost dimension (softmax
    rows, the last step of partial sums) become one `vector.reduction` per
    row, marked reassociable.
  }];
  let dependentDialects = ["affine::AffineDialect", "arith::ArithDialect",
                           "memref::MemRefDialect", "scf::SCFDialect",
                           "vector::VectorDialect"];
}

def TfmApproximateMath : Pass<"tfm-approximate-math"> {
  let summary = "Replaces f32 tanh/erf/exp/log calls by inline polynomial "
                "approximations (vectorisable)";
  let description = [{
    Replaces the f32 transcendental functions tfm's lowerings emit (tanh,
    erf, exp, expm1, log, log1p, log2) by upstream MLIR's polynomial
    approximations, on scalars and vectors alike. Calls into libm are
    opaque to LLVM's loop vectoriser and cost a call per element; the
    inline polynomials vectorise. The errors are tested against libm in
    `test/Pipelines/approximate-math-accuracy.mlir`: absolute error <= 1e-6
    for tanh on [-10, 10] and erf on [-6, 6], relative error <= 1e-6 for
    exp on [-87, 88] (about 2 ulp).
  }];
  let dependentDialects = ["arith::ArithDialect", "math::MathDialect",
                           "vector::VectorDialect"];
}

def TfmFinalizeOutlinedLoops : Pass<"tfm-finalize-outlined-loops",
                                    "ModuleOp"> {
  let summary = "Makes the llvm.func of outlined loop nests internal and "
                "no_inline, and inlines wide entries into their C interface";
  let description = [{
    After `func-to-llvm`: the functions `tfm-outline-loop-nests` created
    become internal and `no_inline` (the O3 inliner would otherwise merge
    every single-call function back). Entries with a great many arguments
    (more than 64) that have a C interface wrapper are made internal and
    `always_inline`: the wrapper's call, thousands of scalar arguments for a
    whole model, costs SelectionDAG seconds.
  }];
}

//===----------------------------------------------------------------------===//

def TfmDeduplicateOutlinedFunctions
    : Pass<"tfm-deduplicate-outlined-functions", "ModuleOp"> {
  let summary = "Merges outlined loop-nest functions with identical bodies";
  let description = [{
    Every layer of a model lowers to the same loop nests over different
    buffers. After `tfm-outline-loop-nests` each nest is a private function
    whose buffers are arguments (constants are cloned in), so the twelve
    layers of a 12-layer model give twelve copies of each function that
    differ only in their names. This pass keeps one function per distinct
    body and signature and points every call at it: the rest of the
    pipeline and LLVM then see one layer's code, and compile time no longer
    grows with depth.

    Two functions are merged when they have the same type and their bodies
    print the same (generic form, locations ignored). Only functions
    marked `tfm.outlined_loop_nest` are considered: entry points and
    functions a user wrote are never merged.
  }];
}

#endif // TFM_CODEGEN_CPU_PASSES_TD
