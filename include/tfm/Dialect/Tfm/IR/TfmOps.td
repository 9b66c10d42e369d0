//===- TfmOps.td - tfm operations --------------------------*- tablegen -*-===//
#ifndef TFM_OPS_TD
#define TFM_OPS_TD

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "tfm/Dialect/Tfm/IR/TfmAttrs.td"
include "tfm/Dialect/Tfm/IR/TfmInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Tfm_Float : AnyTypeOf<[F32, F16, BF16]>;
def Tfm_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16]>;
def Tfm_TokenTensor : StaticShapeTensorOf<[I32, I64]>;
// A position per sequence of the batch (ragged batches): `[B]` of i32 or i64.
def Tfm_RowPositions : 1DTensorOf<[I32, I64]>;
// Where a position-dependent op starts: one `index` for the whole batch, or
// a `[B]` tensor with each sequence's own position.
def Tfm_Position : AnyTypeOf<[Index, Tfm_RowPositions],
                             "index or [B] tensor of per-sequence positions">;

class Tfm_LedgerOp<string mnemonic, list<Trait> traits = [],
                   list<string> ledgerOverrides = []>
    : Tfm_Op<mnemonic, !listconcat(traits,
        [Pure, DeclareOpInterfaceMethods<Tfm_LedgerOpInterface,
                                         ledgerOverrides>])> {
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Embeddings
//===----------------------------------------------------------------------===//

def Tfm_EmbeddingOp : Tfm_LedgerOp<"embedding"> {
  let summary = "token embedding lookup";
  let description = [{
    Gathers rows of the embedding table: `result[b, s, :] = table[ids[b, s], :]`.

    - `ids`: `[B, S]` of i32 or i64.
    - `table`: `[V, d]` (Hugging Face `wte.weight` / `embed_tokens.weight`).
    - result: `[B, S, d]` with the table's element type.

    - `scale` (optional): a factor every gathered row is multiplied by, first
      rounded to the table's element type: Gemma multiplies its embeddings
      by `sqrt(d)` as a tensor of the compute dtype, so a bf16 model scales
      by `bf16(sqrt(d))`. The product is computed in f32 and rounded once.

    - `first_row` (optional): the table is rows `[first_row, first_row + V)`
      of a larger vocabulary's (a rank's slice under `tfm-tensor-parallel`):
      an id in that range gathers `table[id - first_row]`, any other id a
      row of zeros, so that the ranks' results sum to the whole table's.

    Parameters: `V*d`. Without `first_row`, ids outside `[0, V)` are clamped
    by the lowering.

    ```mlir
    %h = tfm.embedding %ids, %wte : (tensor<2x8xi64>, tensor<50257x768xf32>) -> tensor<2x8x768xf32>
    %r = tfm.embedding %ids, %slice, %first : (tensor<2x8xi64>, tensor<25000x768xf32>, index) -> tensor<2x8x768xf32>
    %g = tfm.embedding %ids, %emb {scale = 45.254834 : f32} : (tensor<1x4xi64>, tensor<256000x2048xbf16>) -> tensor<1x4x2048xbf16>
    ```
  }];
  let arguments = (ins Tfm_TokenTensor:$ids, Tfm_FloatTensor:$table,
                       Optional<Index>:$first_row,
                       OptionalAttr<F32Attr>:$scale);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_PositionEmbeddingOp : Tfm_LedgerOp<"position_embedding"> {
  let summary = "adds learned absolute position embeddings";
  let description = [{
    `result[b, s, :] = input[b, s, :] + table[offset[b] + s, :]` (GPT-2's
    `wpe`).

    - `input`: `[B, S, d]`; `table`: `[P, d]` with `P` the context length.
    - `offset` (optional): position of the first token; 0 if absent. An
      `index` applies to every sequence (decode steps pass the current
      position here); a `[B]` tensor of i32/i64 gives each sequence its own
      (a ragged batch's decode step, each sequence at its own length).
    - result: the type of `input`.

    Parameters: `P*d`. Without `offset`, `S <= P` is checked statically.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$table,
                       Optional<Tfm_Position>:$offset);
  let results = (outs Tfm_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def Tfm_LayerNormOp : Tfm_LedgerOp<"layer_norm"> {
  let summary = "layer normalisation over the last dimension, with scale and bias";
  let description = [{
    `y = (x - mean(x)) / sqrt(var(x) + epsilon) * scale + bias`, statistics
    over the last dimension `d` (biased variance, as PyTorch). Statistics are
    computed in f32 whatever the input type.

    - `input`: `[..., d]`; `scale`, `bias`: `[d]`; result: the input's type.

    Parameters: `2d`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$scale,
                       Tfm_FloatTensor:$bias,
                       DefaultValuedAttr<F32Attr, "1.0e-5">:$epsilon);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_RMSNormOp : Tfm_LedgerOp<"rms_norm"> {
  let summary = "root-mean-square normalisation over the last dimension (scale only)";
  let description = [{
    `y = x / sqrt(mean(x^2) + epsilon) * scale` (Llama's `RMSNorm`), with the
    statistic computed in f32.

    With `unit_offset`, the factor is `(1 + scale)` instead (Gemma's
    `GemmaRMSNorm`, whose stored weight is the offset from 1), the sum
    formed in f32 as Gemma does, so that a bf16 weight near 0 keeps its
    precision.

    - `input`: `[..., d]`; `scale`: `[d]`; result: the input's type.

    Parameters: `d`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$scale,
                       DefaultValuedAttr<F32Attr, "1.0e-6">:$epsilon,
                       UnitAttr:$unit_offset);
  let results = (outs Tfm_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Projections
//===----------------------------------------------------------------------===//

def Tfm_LinearOp : Tfm_LedgerOp<"linear"> {
  let summary = "affine projection of the last dimension";
  let description = [{
    `y = x W (+ b)` over the last dimension.

    - `input`: `[..., in]`.
    - `weight`: `[in, out]` when `layout = #tfm.layout<in_out>` (the default;
      GPT-2 `Conv1D`), `[out, in]` when `layout = #tfm.layout<out_in>`
      (`nn.Linear`: Llama, Mixtral).
    - `bias` (optional): `[out]`.
    - result: `[..., out]`, the input's element type.

    Parameters: `in*out (+ out)`. FLOPs: `2 * n * in * out` with `n` the
    product of the leading dimensions.

    ```mlir
    %y = tfm.linear %x, %w, %b : (tensor<2x8x768xf32>, tensor<768x2304xf32>, tensor<2304xf32>) -> tensor<2x8x2304xf32>
    %q = tfm.linear %x, %wq {layout = #tfm.layout<out_in>} : (tensor<1x16x4096xf32>, tensor<4096x4096xf32>) -> tensor<1x16x4096xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       Optional<Tfm_FloatTensor>:$bias,
                       DefaultValuedAttr<Tfm_WeightLayoutAttr,
                                         "::mlir::tfm::WeightLayout::in_out">:$layout);
  let results = (outs Tfm_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// Sizes of the projection: `in` and `out` whatever the layout.
    int64_t getInFeatures();
    int64_t getOutFeatures();
  }];
}

def Tfm_PermuteFeaturesOp : Tfm_LedgerOp<"permute_features"> {
  let summary = "reorders the last dimension by a permutation";
  let description = [{
    `y[..., j] = x[..., order[j]]` for `order` a permutation of `[0, K)`,
    `K` the input's last dimension; the result has the input's type.

    A projection whose weight is stored with its input rows reordered reads
    its input reordered alike, `x W = x[..., order] W[order, :]`: GPTQ's
    act-order checkpoints (`desc_act`) quantize the rows in the order of
    `g_idx`, so that the rows of a group are not consecutive; held with
    their rows sorted by group, each group is whole blocks of 32 again
    (docs/design.md, "GPTQ and AWQ checkpoints"). `order` is a parameter:
    it comes with the weights.

    Parameters: `K` (the order's). FLOPs: 0.

    ```mlir
    %p = tfm.permute_features %x, %order : (tensor<1x8x4096xf32>, tensor<4096xi32>) -> tensor<1x8x4096xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_TokenTensor:$order);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_LMHeadOp : Tfm_LedgerOp<"lm_head"> {
  let summary = "projection of the final hidden states to vocabulary logits";
  let description = [{
    `logits = x W^T` with `weight` `[V, d]` (`layout = out_in`, the default,
    as Hugging Face's `lm_head.weight` or a tied `wte.weight`) or `[d, V]`
    (`in_out`). No bias.

    - `input`: `[B, S, d]`; result: `[B, S, V]`.
    - `logit_softcap` (optional, `c > 0`): the logits pass through
      `c * tanh(logit / c)` (Gemma 2's `final_logit_softcapping`).

    Parameters: `V*d` (shared with the embedding when tied; the ledger counts a
    shared tensor once in its totals). FLOPs: `2*B*S*d*V`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$weight,
                       DefaultValuedAttr<Tfm_WeightLayoutAttr,
                                         "::mlir::tfm::WeightLayout::out_in">:$layout,
                       OptionalAttr<F32Attr>:$logit_softcap);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_GatherPositionsOp : Tfm_Op<"gather_positions", [Pure]> {
  let summary = "one position of each sequence: [B, S, d] -> [B, 1, d]";
  let description = [{
    `result[b, 0, :] = input[b, positions[b], :]`, a position per sequence
    clamped to `[0, S)`. Generation needs the logits of a prompt's last
    position only: a prefill entry imported for generation gathers each
    sequence's last position of the chunk after its last decoder layer, so
    that its final norm and LM head run on one row per sequence rather
    than `S` (a ragged batch's sequences end at different positions, hence
    one position each).

    - `input`: `[B, S, d]`; `positions`: `[B]` of i32 or i64.
    - result: `[B, 1, d]` with the input's element type.

    ```mlir
    %last = tfm.gather_positions %h, %rows : (tensor<2x64x768xf32>, tensor<2xi64>) -> tensor<2x1x768xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_RowPositions:$positions);
  let results = (outs Tfm_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tfm_SplitOp : Tfm_Op<"split", [Pure]> {
  let summary = "splits the last dimension into consecutive pieces";
  let description = [{
    Splits `[..., n]` into pieces `[..., n_i]` with `sum(n_i) = n`, in order:
    the Q, K and V parts of a fused QKV projection (`c_attn` in GPT-2, or the
    output of `--tfm-fuse-qkv`).

    With `groups = G` (default 1), the last dimension is read as `G`
    consecutive groups of `n/G` elements, each group is split into pieces of
    `n_i/G` in order, and piece `i` of every group, concatenated, is result
    `i`. GPT-NeoX's `query_key_value` interleaves per head (`[H, 3, dh]`):
    `groups = H` gives Q, K and V as `[..., H*dh]` each. Every `n_i` must be
    a multiple of `G`.

    ```mlir
    %q, %k, %v = tfm.split %qkv : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
    %q2, %k2, %v2 = tfm.split %neox {groups = 12 : i64} : (tensor<2x8x2304xf32>) -> (tensor<2x8x768xf32>, tensor<2x8x768xf32>, tensor<2x8x768xf32>)
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>,
                                         "1">:$groups);
  let results = (outs Variadic<Tfm_FloatTensor>:$results);
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def Tfm_ConvertOp : Tfm_Op<"convert", [Pure, SameOperandsAndResultShape]> {
  let summary = "converts a float tensor to another float type";
  let description = [{
    Elementwise conversion between f32, f16 and bf16: widening is exact,
    narrowing rounds to the nearest even value. A model computed in bf16 or
    f16 (`transformer-translate --dtype`) ends with one: its logits, rounded
    to the compute type by `tfm.lm_head` as Hugging Face's half-precision
    `lm_head` rounds them, are returned widened to f32, so that samplers,
    `.npy` outputs and the C API read one logits type whatever the compute
    type. A conversion to the input's own type folds away.

    ```mlir
    %l = tfm.convert %logits : (tensor<1x8x50257xbf16>) -> tensor<1x8x50257xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let hasFolder = 1;
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Heads and positions
//===----------------------------------------------------------------------===//

def Tfm_SplitHeadsOp : Tfm_Op<"split_heads", [Pure]> {
  let summary = "reshapes [B, S, H*dh] to [B, H, S, dh]";
  let description = [{
    Splits the last dimension into `num_heads` heads of size `dh` and moves
    the head axis before the sequence axis: `view(B,S,H,dh).transpose(1,2)`.
    `dh` is the result's last dimension and need not equal `d/H` of the model.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, I64Attr:$num_heads);
  let results = (outs Tfm_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tfm_MergeHeadsOp : Tfm_Op<"merge_heads", [Pure]> {
  let summary = "reshapes [B, H, S, dh] to [B, S, H*dh]";
  let description = [{
    The inverse of `tfm.split_heads`: `transpose(1,2).reshape(B,S,H*dh)`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Tfm_RoPEOp : Tfm_LedgerOp<"rope"> {
  let summary = "rotary position embedding (rotate-half convention)";
  let description = [{
    Rotates each head vector by position-dependent angles, in the
    rotate-half convention of Llama / GPT-NeoX (pairs `(i, i + dh/2)`, not
    interleaved pairs):

    ```
    inv_freq[i] = theta^(-2i/dh),   angle = (offset[b] + s) * inv_freq[i]
    y[..., i]        = x[i] * cos(angle) - x[i + dh/2] * sin(angle)
    y[..., i + dh/2] = x[i + dh/2] * cos(angle) + x[i] * sin(angle)
    ```

    - `input`: `[B, H, S, dh]`; result: the same type.
    - `offset` (optional): absolute position of the first token; an `index`
      for the whole batch or a `[B]` tensor of i32/i64, one per sequence.
    - `theta`: the base (`rope_theta`, 10000 by default).
    - `inv_freq` (optional): the `r/2` inverse frequencies themselves,
      replacing `theta^(-2i/r)` (`theta` is then unused). Scaled RoPE
      variants (Hugging Face `rope_scaling` `linear`, `llama3`) differ from
      plain RoPE only in these frequencies; the importer computes them as
      transformers does, in f32, so the op needs no knowledge of each
      variant's formula. Each must be finite and positive.
    - `rotary_dims` (optional, `r`): partial rotary embedding (GPT-NeoX's
      `rotary_pct`, Phi's `partial_rotary_factor`): only the first `r`
      elements of each head rotate, as above with `dh` replaced by `r`
      (frequencies `theta^(-2i/r)`, pairs `(i, i + r/2)`); the other
      `dh - r` pass through unchanged. Absent, `r = dh`. `r` must be even
      and in `[2, dh]`; so must `dh` when `r` is absent.
    - `attention_factor` (optional, finite and positive): multiplies
      `cos(angle)` and `sin(angle)`, so every rotated element, as the `yarn`
      and `longrope` scalings of Hugging Face do (their "attention factor"
      scales `q.k` by its square through the rotated q and k). Absent, 1.

    No parameters.

    ```mlir
    %q = tfm.rope %x, %pos {inv_freq = array<f32: 1.0, 0.01>} : (tensor<1x2x8x4xf32>, index) -> tensor<1x2x8x4xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Optional<Tfm_Position>:$offset,
                       DefaultValuedAttr<F32Attr, "10000.0">:$theta,
                       OptionalAttr<DenseF32ArrayAttr>:$inv_freq,
                       OptionalAttr<I64Attr>:$rotary_dims,
                       OptionalAttr<F32Attr>:$attention_factor);
  let extraClassDeclaration = [{
    /// The number of rotated elements of each head: `rotary_dims` or `dh`.
    int64_t getRotaryDimsValue();
  }];
  let results = (outs Tfm_FloatTensor:$result);
  // Plain RoPE, the common case, without naming the optional frequencies.
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$input, "Value":$offset,
                   "FloatAttr":$theta), [{
      build($_builder, $_state, result, input, offset, theta,
            /*inv_freq=*/DenseF32ArrayAttr(), /*rotary_dims=*/IntegerAttr(),
            /*attention_factor=*/FloatAttr());
    }]>
  ];
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

def Tfm_AttentionOp : Tfm_LedgerOp<"attention", [],
                                    ["getKVCacheBytesPerToken"]> {
  let summary = "scaled dot-product attention, causal by default (MHA, GQA, MQA)";
  let description = [{
    `softmax(Q K^T * scale + mask) V` per query head.

    - `query`: `[B, Hq, S, dh]`.
    - `key`: `[B, Hkv, Skv, dh]`, `value`: `[B, Hkv, Skv, dv]`, with
      `Hq % Hkv == 0`: query head `h` reads key/value head `h / (Hq/Hkv)`.
      `Hkv == Hq` is MHA, `Hkv == 1` MQA, anything between GQA.
    - `offset` (optional, `index`): absolute position of the first query.
      Absent, queries are the last `S` positions (`offset = Skv - S`), which
      covers prefill (`S == Skv`). A decode step over a preallocated cache
      passes its position: later cache slots are then in the future and
      masked by causality.
      A `[B]` tensor of i32/i64 instead gives each sequence its own offset
      (ragged batches: right-padded sequences of different lengths, each
      at its own position over its own cache row). Query `s` of sequence `b`
      is at position `offset[b] + s` and sees keys `j <= offset[b] + s`, so
      a sequence never reads the padding or the stale cache slots past its
      own length. Per-sequence offsets need `causal`: they mark where each
      sequence's keys end.
    - `causal` (default true): query at position `p` sees keys `j <= p`.
    - `sliding_window` (optional, `W >= 1`, requires `causal`): query at
      position `p` sees only keys `p - W < j <= p`, the last `W` positions
      including its own (Mistral's `sliding_window`). The key tensor may
      still hold every position (a full-size KV cache): older keys are
      masked, and `--tfm-flash-attention` skips key tiles wholly before the
      window.
    - `ring_cache` (unit, requires `sliding_window` W and an `offset`): the
      key/value tensors are a ring of `Skv` slots that `tfm.kv_cache_write
      {ring}` fills, position `p` in slot `p mod Skv`, so a sliding layer's
      cache holds `Skv = W + S - 1` slots however long the generation (the
      verifier requires at least that many: every key the chunk's queries
      see is then still in the ring). Slot `j` holds the latest position
      congruent to `j` that is at most `L`, the last query's position
      (`offset + S - 1`, per sequence): `L - ((L - j) mod Skv)`; a negative
      one (a slot not yet written) is masked like a future key.
    - `scale` (default `1/sqrt(dh)`).
    - `logit_softcap` (optional, `c > 0`): the scaled scores pass through
      `c * tanh(score / c)` before the mask (Gemma 2's
      `attn_logit_softcapping`), bounding them to `(-c, c)`.
    - result: `[B, Hq, S, dv]`.

    FLOPs: `2*B*Hq*S*Skv*dh` for `Q K^T` plus `2*B*Hq*S*Skv*dv` for the
    product with `V`, counted per query head (GQA does not shrink them) and
    without the causal half. KV cache per token: `Hkv*(dh+dv)` elements per
    sequence.

    This op stays high-level until `--tfm-flash-attention` or
    `--tfm-to-linalg` lowers it; nothing recovers it from generic IR.
  }];
  let arguments = (ins Tfm_FloatTensor:$query, Tfm_FloatTensor:$key,
                       Tfm_FloatTensor:$value, Optional<Tfm_Position>:$offset,
                       DefaultValuedAttr<BoolAttr, "true">:$causal,
                       OptionalAttr<F32Attr>:$scale,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:
                           $sliding_window,
                       OptionalAttr<F32Attr>:$logit_softcap,
                       UnitAttr:$ring_cache);
  let results = (outs Tfm_FloatTensor:$result);
  // Attention without a sliding window, the common case.
  let builders = [
    OpBuilder<(ins "Type":$result, "Value":$query, "Value":$key,
                   "Value":$value, "Value":$offset, "BoolAttr":$causal,
                   "FloatAttr":$scale), [{
      build($_builder, $_state, result, query, key, value, offset, causal,
            scale, /*sliding_window=*/IntegerAttr(),
            /*logit_softcap=*/FloatAttr(), /*ring_cache=*/UnitAttr());
    }]>
  ];
  let extraClassDeclaration = [{
    /// The softmax scale: the `scale` attribute or `1/sqrt(dh)`.
    double getScaleValue();

    /// Builds (at `b`'s insertion point) the i1 "the causal mask hides the
    /// key in slot `keySlot` from the query at `queryPos`": the key comes
    /// after the query, or is older than its sliding window (`queryPos -
    /// keyPos >= W`). The key's position is its slot, or under `ring_cache`
    /// the one the ring holds there given `lastQueryPos`, the position of
    /// the sequence's last query (unused without a ring; then it may be
    /// null). Null when the op is not causal. All index values. The one
    /// definition of the mask shared by the linalg lowering and the flash
    /// form; each caller adds its own padding mask and masked value.
    Value buildCausallyHidden(OpBuilder &b, Location loc, Value queryPos,
                              Value keySlot, Value lastQueryPos);

    /// Builds the score of f32 product `dot` (one query row times one key):
    /// `dot * scale`, through `c * tanh(. / c)` with a `logit_softcap`. The
    /// one definition shared by the linalg lowering and the flash form,
    /// applied before either masks.
    Value buildScore(OpBuilder &b, Location loc, Value dot);
  }];
}

def Tfm_KVCacheWriteOp : Tfm_Op<"kv_cache_write", [Pure]> {
  let summary = "writes new keys or values into a preallocated KV cache";
  let description = [{
    `result = cache` with
    `result[b, :, position[b] : position[b] + S, :] = update[b]`, or with
    `ring`, `result[b, :, (position[b] + s) mod S_max, :] = update[b, :, s]`
    for each `s < S` (a sliding layer's bounded cache: see `tfm.attention`'s
    `ring_cache`; the position then has no upper bound).

    - `cache`: `[B, Hkv, S_max, dh]`, preallocated for the whole generation.
    - `update`: `[B, Hkv, S, dh]`, the keys or values of the new tokens.
    - `position`: the sequence position of the first new token, an `index`
      for the whole batch or a `[B]` tensor of i32/i64 with each sequence's
      own (ragged batches); `position + S <= S_max` is the caller's contract
      (transformer-runner checks it before every step).
    - result: the cache's type.

    On tensors this is a value-semantics update; after bufferization with a
    writable cache argument it writes in place, so a decode step costs
    `O(S)` cache writes, not a copy of the cache. An attention over the
    result with `offset = position` sees exactly the tokens written so far:
    later slots are in the future and masked.
  }];
  let arguments = (ins Tfm_FloatTensor:$cache, Tfm_FloatTensor:$update,
                       Tfm_Position:$position, UnitAttr:$ring);
  let results = (outs Tfm_FloatTensor:$result);
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Activations and the MLP
//===----------------------------------------------------------------------===//

def Tfm_GeluOp : Tfm_LedgerOp<"gelu", [SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `approximate = none`: `0.5 x (1 + erf(x / sqrt(2)))`.
    `approximate = tanh` (GPT-2's `gelu_new`):
    `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input,
                       DefaultValuedAttr<Tfm_GeluApproximationAttr,
                         "::mlir::tfm::GeluApproximation::none">:$approximate);
  let results = (outs Tfm_FloatTensor:$result);
  // SameOperandsAndResultType is the whole contract.
  let hasVerifier = 0;
}

def Tfm_SiluOp : Tfm_LedgerOp<"silu", [SameOperandsAndResultType]> {
  let summary = "sigmoid linear unit, x * sigmoid(x)";
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  // SameOperandsAndResultType is the whole contract.
  let hasVerifier = 0;
}

def Tfm_SwiGLUOp : Tfm_LedgerOp<"swiglu", [SameOperandsAndResultType]> {
  let summary = "gated SiLU: silu(gate) * up";
  let description = [{
    The gate of a SwiGLU MLP: `silu(gate) * up`, both `[B, S, m]`. With its
    three projections (gate `d->m`, up `d->m`, down `m->d`) the MLP holds
    `3*d*m` parameters.
  }];
  let arguments = (ins Tfm_FloatTensor:$gate, Tfm_FloatTensor:$up);
  let results = (outs Tfm_FloatTensor:$result);
  // SameOperandsAndResultType is the whole contract.
  let hasVerifier = 0;
}

def Tfm_ReluOp : Tfm_LedgerOp<"relu", [SameOperandsAndResultType]> {
  let summary = "rectified linear unit, max(x, 0)";
  let description = [{
    The activation of OPT's MLP (`activation_function: relu`). NaN stays NaN,
    as `torch.relu`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
  // SameOperandsAndResultType is the whole contract.
  let hasVerifier = 0;
}

def Tfm_GeGLUOp : Tfm_LedgerOp<"geglu", [SameOperandsAndResultType]> {
  let summary = "gated GELU: gelu(gate) * up";
  let description = [{
    The gate of a GeGLU MLP (Gemma): `gelu(gate) * up`, both `[B, S, m]`,
    with GELU as in `tfm.gelu` (`approximate = tanh` is Gemma's
    `gelu_pytorch_tanh`). Computed in f32 and rounded once. With its three
    projections the MLP holds `3*d*m` parameters, as a SwiGLU MLP.

    ```mlir
    %a = tfm.geglu %gate, %up {approximate = #tfm.gelu<tanh>} : (tensor<1x4x64xf32>, tensor<1x4x64xf32>) -> tensor<1x4x64xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$gate, Tfm_FloatTensor:$up,
                       DefaultValuedAttr<Tfm_GeluApproximationAttr,
                         "::mlir::tfm::GeluApproximation::none">:$approximate);
  let results = (outs Tfm_FloatTensor:$result);
  // SameOperandsAndResultType is the whole contract.
  let hasVerifier = 0;
}

def Tfm_ResidualAddOp : Tfm_LedgerOp<"residual_add"> {
  let summary = "adds a sublayer's output back onto the residual stream";
  let description = [{
    `result = residual + branch`. The residual stream is `[B, S, d]` and the
    result has its type.

    The op itself only requires the same rank and element type; that both
    sides have identical shapes (the sublayer returned to `[B, S, d]`) is
    checked by `--tfm-verify-contracts`, which can say which sublayer broke
    the contract and where its output came from.
  }];
  let arguments = (ins Tfm_FloatTensor:$residual, Tfm_FloatTensor:$branch);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_MoEOp : Tfm_LedgerOp<"moe", [AttrSizedOperandSegments]> {
  let summary = "sparse mixture of SwiGLU experts with top-k routing (Mixtral)";
  let description = [{
    Per token `x` (`[B, S, d]`):

    ```
    p        = softmax(x R^T)                    // router: [E, d]
    (w, e)   = top_k(p)                          // k experts per token
    w        = w / sum(w)                        // renormalised
    y        = sum_i w_i * down_e_i(silu(gate_e_i(x)) * up_e_i(x))
    ```

    With `normalize_top_k = false` (Qwen3-MoE's `norm_topk_prob: false`)
    the selected probabilities weigh the experts as they are, without the
    renormalisation.

    `expert_weights` holds, for each of the `E` experts in order, its gate
    `[m, d]`, up `[m, d]` and down `[d, m]` weights in `nn.Linear` layout
    (Mixtral's `w1`, `w3`, `w2`), so `3*E` operands.

    - `first_expert` (optional): the operands are experts `[first_expert,
      first_expert + E)` of the router's `R` (`E` dividing `R`), a rank's
      experts under expert parallelism (`tfm-tensor-parallel`): every token
      is routed over all `R` experts, and only the selected experts this op
      holds contribute, so that the ranks' results sum to the whole
      layer's. Without it the op holds all of them (`E = R`).

    ```mlir
    %y = tfm.moe %x, %router, %g0, %u0, %d0, %g1, %u1, %d1 {top_k = 2 : i64} : (...) -> tensor<1x8x64xf32>
    %p = tfm.moe %x, %router, %g0, %u0, %d0 first_expert(%first) {top_k = 2 : i64} : (..., index) -> tensor<1x8x64xf32>
    ```

    Parameters: `R*d + 3*E*d*m`. FLOPs count the router and, of the `top_k`
    experts a token runs, the expected share this op holds: `2*n*d*R +
    top_k * 6*n*d*m * E / R`.
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Tfm_FloatTensor:$router,
                       Variadic<Tfm_FloatTensor>:$expert_weights,
                       Optional<Index>:$first_expert,
                       I64Attr:$top_k,
                       DefaultValuedAttr<BoolAttr, "true">:$normalize_top_k);
  let results = (outs Tfm_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $router (`,` $expert_weights^)?
    (`first_expert` `(` $first_expert^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The experts this op holds (E).
    int64_t getNumExperts() { return getExpertWeights().size() / 3; }
    /// The experts the router chooses among (R; E without first_expert).
    int64_t getNumRoutedExperts();
    int64_t getIntermediateSize();
    Value getExpertGate(int64_t e) { return getExpertWeights()[3 * e]; }
    Value getExpertUp(int64_t e) { return getExpertWeights()[3 * e + 1]; }
    Value getExpertDown(int64_t e) { return getExpertWeights()[3 * e + 2]; }
  }];
}

//===----------------------------------------------------------------------===//
// Collectives (tensor-parallel models)
//===----------------------------------------------------------------------===//

def Tfm_AllReduceOp : Tfm_LedgerOp<"all_reduce",
                                    [AllTypesMatch<["input", "result"]>],
                                    ["getCommunicationBytes"]> {
  let summary = "sums a tensor over the ranks of a tensor-parallel model";
  let description = [{
    Every rank of the module's `tfm.tensor_parallel = N` ranks holds a
    partial `input`; every rank gets the elementwise sum of the N. The
    row-parallel projections of `tfm-tensor-parallel` (o_proj, down_proj)
    end with one: each rank contracted its slice of the features.

    - `bias` (optional, `[d]` for an input `[..., d]`): added once, to the
      sum (the bias of the row-parallel projection; added on every rank
      before the sum it would count N times).

    The sum is formed in f32 whatever the element type (bf16 and f16 inputs
    are widened, summed and rounded once). Only valid in a module with
    `tfm.tensor_parallel`; every rank runs the same sequence of collectives.

    Communication: a ring all-reduce sends `2 (N - 1) / N` times the
    tensor's bytes from each rank (the ledger's `comm` column).

    ```mlir
    %y = tfm.all_reduce %partial : (tensor<1x8x4096xf32>) -> tensor<1x8x4096xf32>
    %z = tfm.all_reduce %partial, %bias : (tensor<1x8x768xf32>, tensor<768xf32>) -> tensor<1x8x768xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input, Optional<Tfm_FloatTensor>:$bias);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_RankOp : Tfm_Op<"rank", [Pure]> {
  let summary = "this process's rank among the module's tensor-parallel ranks";
  let description = [{
    The rank `r` in `[0, N)` of the process running the code, in a module of
    `tfm.tensor_parallel = N` ranks: what a rank's slice of a parameter
    depends on at run time, one compiled module serving every rank
    (`tfm-tensor-parallel` computes a vocab-parallel embedding's first row
    from it). `tfm-collectives-to-mpi` lowers it to `mpi.comm_rank`.

    ```mlir
    %r = tfm.rank
    ```
  }];
  let results = (outs Index:$rank);
  let hasVerifier = 1;
  let assemblyFormat = "attr-dict";
}

def Tfm_AllGatherOp : Tfm_LedgerOp<"all_gather", [],
                                    ["getCommunicationBytes"]> {
  let summary = "concatenates the ranks' slices of the last dimension";
  let description = [{
    Every rank of the module's `tfm.tensor_parallel = N` ranks holds one
    slice `[..., n]` of a tensor's last dimension; every rank gets the
    whole `[..., N*n]`, rank r's slice at `r*n`. The vocab-parallel LM head
    of `tfm-tensor-parallel` ends with one: each rank computed the logits
    of its slice of the vocabulary.

    Lowered, as MLIR 22's `mpi` dialect has no all-gather, to a sum of
    each rank's slice placed in zeros (exact: every other rank adds 0; a
    -0.0 logit becomes +0.0), in f32. The ledger counts what that sends.

    ```mlir
    %all = tfm.all_gather %slice : (tensor<1x8x16000xf32>) -> tensor<1x8x32000xf32>
    ```
  }];
  let arguments = (ins Tfm_FloatTensor:$input);
  let results = (outs Tfm_FloatTensor:$result);
}

def Tfm_BufferAllGatherOp : Tfm_Op<"buffer_all_gather"> {
  let summary = "the bufferized tfm.all_gather: `source` slices into `target`";
  let description = [{
    What `tfm.all_gather` bufferizes to: reads this rank's `source`
    `[..., n]`, writes every rank's slices, in rank order, into `target`
    `[..., N*n]` (f32). `tfm-collectives-to-mpi` lowers it.
  }];
  let arguments = (ins Arg<StaticShapeMemRefOf<[F32]>, "", [MemRead]>:$source,
                       Arg<StaticShapeMemRefOf<[F32]>, "", [MemWrite]>:$target);
  let hasVerifier = 1;
  let assemblyFormat = "$source `,` $target attr-dict `:` type($source) `,` type($target)";
}

def Tfm_BufferAllReduceOp : Tfm_Op<"buffer_all_reduce"> {
  let summary = "the bufferized tfm.all_reduce: sums `source` into `target`";
  let description = [{
    What `tfm.all_reduce` bufferizes to: reads this rank's `source`, writes
    the sum over the ranks into `target` (f32, the same shape). Its memory
    effects let the buffer deallocation pipeline place frees around it;
    `tfm-collectives-to-mpi` then lowers it to MPI (`mpi.allreduce`).
  }];
  let arguments = (ins Arg<StaticShapeMemRefOf<[F32]>, "", [MemRead]>:$source,
                       Arg<StaticShapeMemRefOf<[F32]>, "", [MemWrite]>:$target);
  let hasVerifier = 1;
  let assemblyFormat = "$source `,` $target attr-dict `:` type($source) `,` type($target)";
}

#endif // TFM_OPS_TD
