//===- Passes.td - tfm transformation passes ---------------*- tablegen -*-===//
#ifndef TFM_TRANSFORMS_PASSES_TD
#define TFM_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TfmVerifyContracts : Pass<"tfm-verify-contracts", "ModuleOp"> {
  let summary = "Checks the cross-op shape contracts of decoder blocks";
  let description = [{
    Enforces the rules that no single op can see:

    - both sides of every `tfm.residual_add` have identical shape and dtype;
      the diagnostic names the sublayer whose output broke it (attention,
      MLP, MoE) with a note at the value's producer;
    - every attention and MLP sublayer returns to the residual stream's
      `[B, S, d]`;
    - a function marked `tfm.block` returns the type of its first argument
      (a block maps `[B, S, d]` to `[B, S, d]`).

    Every pipeline runs this pass first.
  }];
}

def TfmPrintLedger : Pass<"tfm-print-ledger", "ModuleOp"> {
  let summary = "Prints the model ledger: parameters, FLOPs, memory per op";
  let description = [{
    For every function, one row per tfm op with its output shape, trainable
    parameters (operands that are `tfm.param` arguments), FLOPs (`2nab` per
    `[n,a]x[a,b]` matmul; attention per query head), weight bytes,
    activation bytes and KV-cache bytes per token; then totals per
    category (embedding, norm, attention, mlp, moe, lm_head) and for the
    function. A parameter used by two ops (tied embeddings) is counted once
    in the totals. For each attention it also reports the peak scratch
    memory of the naive form (the f32 score and probability matrices,
    `S x S_kv` each) and of the flash form (one tile's worth, for the
    given tile sizes), and the function's peak of each. The peak of live
    activations is the most bytes of op results alive at once (each from its
    op to its last use, results the function returns excluded): the least a
    liveness plan of the temporaries needs (`tfm-plan-workspace` in the CPU
    pipeline). Output goes to stdout; the IR is left unchanged.
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: text or json">,
    Option<"flashQueryTile", "flash-query-tile", "int64_t",
           /*default=*/"::mlir::tfm::kDefaultFlashQueryTile",
           "Query tile the flash-attention scratch estimate assumes">,
    Option<"flashKeyTile", "flash-key-tile", "int64_t",
           /*default=*/"::mlir::tfm::kDefaultFlashKeyTile",
           "Key tile the flash-attention scratch estimate assumes">,
  ];
}

def TfmQuantizeWeights : Pass<"tfm-quantize-weights", "ModuleOp"> {
  let summary = "Holds projection weights and embedding tables quantized (tfm.param_quant)";
  let description = [{
    Marks each f32 weight parameter that only `tfm.linear` and `tfm.lm_head`
    ops read (with one layout), `tfm.moe` as an expert's gate, up or down
    weight (out_in), or `tfm.embedding` as its table (rows of
    K-blocks, as an out_in LM head's: a tied table is one weight), with
    `tfm.param_quant = "<scheme>"`, as llama.cpp's quantizer stores
    `token_embd` too: whoever
    binds weights quantizes the weight-file tensor once, along K in blocks of
    32 (`q8_0`, `q4_0`: llama.cpp's Q8_0 and Q4_0, bit for bit) or
    super-blocks of 256 (`q4_k`, `q5_k`, `q6_k`: llama.cpp's K formats, bit
    for bit), and the
    code generator reads
    the blocks instead of f32 (tfm-cpu-pack-weights). The argument keeps its
    f32 type, whose value is now the dequantized weights: every lowering of
    the ops stays exact with respect to it, and the ledger counts the bytes
    the format stores.

    Left in f32: a parameter something else reads (a position embedding's
    table, a norm's scale), and one whose K is no multiple of the format's
    block (as llama.cpp's quantizer leaves it). A weight of another element type (a bf16 or f16 model) is an
    error: quantized weights are read with f32 activations.

    Runs after `tfm-fuse-qkv` (a fused Q/K/V weight is quantized per output
    row, as its parts would be).

    `stored` names the parameters a weight file already holds in a block
    format (a GGUF file's Q8_0, Q4_0 and K-format tensors), `name:format`
    each: such
    a parameter is held in its file's format whatever `scheme` says, so
    that its blocks are bound as they are; a fused parameter, when all its
    parts are stored in one format. `scheme = none` quantizes nothing else.
  }];
  let options = [
    Option<"scheme", "scheme", "std::string", /*default=*/"\"q8_0\"",
           "Block format: q8_0, q4_0, q4_k, q5_k, q6_k, or none (only the stored ones)">,
    ListOption<"stored", "stored", "std::string",
               "Parameters stored quantized, as name:format (q8_0, q4_0, q4_k, q5_k or q6_k)">,
  ];
}

def TfmTensorParallel : Pass<"tfm-tensor-parallel", "ModuleOp"> {
  let summary = "Partitions attention and MLP blocks over ranks (Megatron-style)";
  let description = [{
    Rewrites the module into the model one rank of `ranks` runs; the IR is
    the same on every rank (each binds its own slices of the weights), so
    one compile serves them all. Where a `tfm.attention` or an MLP
    activation (`gelu`, `silu`, `relu`, `swiglu`, `geglu`) sits between
    projections, its block is partitioned:

    - the projections that feed it (q/k/v, gate/up, fc; a fused `c_attn`
      or `gate_up_proj` piece by piece through its `tfm.split`) become
      column-parallel: each rank computes `1/ranks` of the heads or the
      intermediate features;
    - everything between works on the rank's heads (`split_heads`, `rope`,
      per-head norms, the KV cache `[B, Hkv/ranks, S, dh]`, `attention`) or
      features (the activations);
    - the projection it feeds (o_proj, down_proj, c_proj) becomes
      row-parallel: each rank contracts its features, and a `tfm.all_reduce`
      sums the partial results (adding the projection's bias once).

    Key/value heads fewer than ranks are replicated: with `Hkv` dividing
    `ranks`, each rank holds the one head its query heads read. Weights get
    a `tfm.param_shard` (which slice of the checkpoint's tensor each rank
    binds), the module `tfm.tensor_parallel = ranks`.

    A `tfm.moe` whose `E` experts the ranks divide is expert-parallel: rank
    `r` holds whole experts `[r E/ranks, (r+1) E/ranks)` (the op keeps the
    operands of the first `E/ranks`, each with a `tfm.param_rank_names`
    naming every rank's tensor in that place, and its `first_expert` is
    `tfm.rank * E/ranks`). Otherwise (fewer experts than ranks) it is
    divided inside each expert, as a dense MLP: each rank holds `1/ranks`
    of every expert's intermediate features (gate and up rows, down
    columns). Either way the router is replicated (every rank routes a
    token alike), and a `tfm.all_reduce` sums the ranks' partial outputs.

    The LM head is vocab-parallel: each rank computes the logits of
    `V / ranks` tokens (its rows of the weight), and a `tfm.all_gather`
    gives every rank all of them. The embedding table likewise: each rank
    holds `V / ranks` rows from `tfm.rank * V / ranks` (the embedding's
    `first_row`), gathers the ids among them and zero rows for the others,
    and a `tfm.all_reduce` sums the ranks' lookups. A vocabulary the ranks
    do not divide, or an LM head tied to the embedding (one table read by
    both), stays whole on every rank.

    A size that does not divide (query heads, key/value heads, an MLP's or
    an expert's width) is an error naming the op. Blocks of other structure
    (a norm over all heads' features, as OLMo2's q_norm) stay replicated,
    as do norms. `ranks = 1` leaves the module as it is; a module already
    partitioned for `ranks` too.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "The number of ranks (processes) the model is divided over">,
  ];
  let dependentDialects = ["arith::ArithDialect"];
}

def TfmFuseQKV : Pass<"tfm-fuse-qkv", "ModuleOp"> {
  let summary = "Fuses the Q, K and V projections of an attention into one GEMM";
  let description = [{
    Where the query, key and value of a `tfm.attention` come (through
    `tfm.rope`, `tfm.split_heads` and, in a prefill or decode step, the
    `tfm.kv_cache_write` of the keys and values into their caches) from
    three `tfm.linear` ops that read
    the same input, with the same element type, the same weight layout and
    either all or no biases, and whose weights are `tfm.param` arguments,
    the three projections become one `tfm.linear` against a concatenated
    weight `[d, d_q + 2*d_kv]` (or `[d_q + 2*d_kv, d]` for `out_in`),
    followed by a `tfm.split`. GQA and MQA (`d_kv < d_q`) are included.

    The concatenated weight is a new function argument whose
    `tfm.param_parts` attribute lists the original tensor names and
    `tfm.param_concat_axis` the axis: the runner concatenates once, when it
    binds weights, never on a forward call. The original arguments are
    removed when nothing else uses them.

    Projections that do not share an input, or whose dtypes or layouts
    differ, or whose weights are not parameters, are left alone; so are
    those `stored` says a weight file holds in different block formats (a
    Q4_K_M GGUF file's Q4_K query and key beside a Q6_K value): fused, they
    would have to be held in one format, requantizing a part the file
    already holds.
  }];
  let options = [
    ListOption<"stored", "stored", "std::string",
               "Parameters stored quantized, as name:format (the CPU "
               "pipeline's quantize-stored)">,
  ];
}

def TfmFlashAttention : Pass<"tfm-flash-attention", "ModuleOp"> {
  let summary = "Rewrites tfm.attention into tiled online-softmax loops (FlashAttention)";
  let description = [{
    Replaces each `tfm.attention` by loops over batch, key/value head and
    query tiles; for each query tile an inner loop walks key/value tiles
    keeping, per query row, a running maximum `m`, a running sum `l` and an
    output accumulator, rescaling both by `exp(m_old - m_new)` on each tile
    and dividing once at the end. The result is `scf` loops around `linalg`
    ops on tensors, which the usual tensor pipeline bufferizes.

    - Under a causal mask the inner loop stops at the last key tile a query
      tile can see: tiles wholly in the future are skipped, not masked.
    - GQA/MQA: a query tile holds all `Hq/Hkv` query heads of one key/value
      head, so each K/V tile is read once for its whole group.
    - Lengths that are not a multiple of the tile sizes are padded once up
      front (the padding keys are masked), so every tile has a static shape.
    - Scratch is `O(tile)`: no value of `S x S_kv` elements is created.
    - f16/bf16 inputs accumulate in f32. The probabilities p are rounded to
      the value type for `P V` (the row sum adds them unrounded), as Hugging
      Face's eager attention rounds them before its `P V`; the rounded tile
      stays f32 (a round trip through the value type).
    - An attention with one query row (a decode step) over fewer than
      `decode-min-keys` keys is left as it is: its scores are one row of
      `S_kv` values, and tiling would only add loop overhead. Over a longer
      KV cache the plain form reads all `S_kv` cached keys and values every
      step, written or not; the tiled form with the causal skip reads only
      the tiles up to the step's position (bench/llamacpp's TinyLlama-shaped
      model, `transformer-runner /tmp/tl/hf --input-ids ids.npy --generate
      32 --threads 2 --repeat 3 --quantize q4_0 --max-seq-len 2048`, Q4_0
      decode at positions 128-160: 27.4 ms/token with
      `--pipeline-options=flash-decode-min-keys=100000`, 23.6 with `=1`;
      Xeon VM).
    - With `transpose-keys` (default on), query tiles of at least 16 rows
      (prefill) read the keys from one transposed copy `[B, Hkv, dh, S_kv]`
      made before the loops, so each score tile is a plain `[rows x dh] x
      [dh x keys]` product with unit-stride rows; smaller query tiles (decode)
      read key rows directly (transposing a whole KV cache per step would
      cost more than the step).
  }];
  let options = [
    Option<"queryTile", "query-tile", "int64_t",
           /*default=*/"::mlir::tfm::kDefaultFlashQueryTile",
           "Query rows per tile">,
    Option<"keyTile", "key-tile", "int64_t",
           /*default=*/"::mlir::tfm::kDefaultFlashKeyTile",
           "Key/value rows per tile">,
    Option<"causalSkip", "causal-skip", "bool", /*default=*/"true",
           "Skip key tiles wholly in a causal query tile's future, and under "
           "a sliding window those wholly before it (off: visit and mask "
           "them; for measuring what the skip saves)">,
    Option<"transposeKeys", "transpose-keys", "bool", /*default=*/"true",
           "Read the keys of query tiles with >= 16 rows from one transposed "
           "copy made before the loops">,
    Option<"decodeMinKeys", "decode-min-keys", "int64_t", /*default=*/"512",
           "Tile a one-query-row attention (a decode step) only over at least "
           "this many keys">,
  ];
  let dependentDialects = [
    "mlir::arith::ArithDialect", "mlir::linalg::LinalgDialect",
    "mlir::math::MathDialect", "mlir::scf::SCFDialect",
    "mlir::tensor::TensorDialect"
  ];
}

#endif // TFM_TRANSFORMS_PASSES_TD
