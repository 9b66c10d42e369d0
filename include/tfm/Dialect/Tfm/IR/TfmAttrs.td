//===- TfmAttrs.td - tfm enums and attributes --------------*- tablegen -*-===//
#ifndef TFM_ATTRS_TD
#define TFM_ATTRS_TD

include "tfm/Dialect/Tfm/IR/TfmDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/AttrTypeBase.td"

def Tfm_WeightLayout : I32EnumAttr<"WeightLayout",
    "memory layout of a projection weight", [
      I32EnumAttrCase<"in_out", 0>,
      I32EnumAttrCase<"out_in", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
  let description = [{
    `in_out` stores the weight as `[in, out]` (GPT-2's `Conv1D`): `y = x W`.
    `out_in` stores it as `[out, in]` (PyTorch `nn.Linear`, Llama, Mixtral):
    `y = x W^T`. The layout is an attribute so that published weights bind
    without a transposing copy.
  }];
}

def Tfm_WeightLayoutAttr : EnumAttr<Tfm_Dialect, Tfm_WeightLayout, "layout"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "approximation used by GELU", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
}

def Tfm_GeluApproximationAttr
    : EnumAttr<Tfm_Dialect, Tfm_GeluApproximation, "gelu"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tfm_CpuTilingAttr : AttrDef<Tfm_Dialect, "CpuTiling"> {
  let mnemonic = "cpu_tiling";
  let summary = "the CPU tile sizes of one contraction";
  let description = [{
    The plan `tfm-cpu-configure` derives from the target CPU for one
    contraction and records on it as `tfm.cpu_tiling`; the passes that
    tile, pack and vectorise it read nothing else (configuration apart from
    mechanism, as IREE's `lowering_config`):

    - `register_rows` x `register_cols`: the register tile (M rows, N
      columns in vector lanes);
    - `min_rows`: the fewest rows of a shorter register tile taken where
      the planned rows do not divide M (0, the default: no shorter tile);
    - `block_rows` x `block_cols` x `block_depth`: the cache block (M, N, K);
    - `dot_cols`, `dot_depth`: outputs per tile and vector width of the
      dot-product form (contractions of few rows);
    - `gemv_panels`: panels of a packed B that a one-row register tile
      reads at once (a decode step's GEMV: one panel is one sequential
      stream of the weight; 1, the default: one panel);
    - `amx_block_cols`, `amx_block_depth`: the B block of the AMX form of
      an f32 GEMM (0: not planned on AMX);
    - `bf16_pairs`: a bf16 GEMM as AVX512-BF16 pair dot products.

    ```mlir
    linalg.matmul {tfm.cpu_tiling = #tfm.cpu_tiling<register_rows = 4,
        register_cols = 24, min_rows = 3, block_rows = 64, block_cols = 192,
        block_depth = 256, dot_cols = 4, dot_depth = 32>}
    ```
  }];
  let parameters = (ins
    "int64_t":$register_rows,
    "int64_t":$register_cols,
    DefaultValuedParameter<"int64_t", "0">:$min_rows,
    "int64_t":$block_rows,
    "int64_t":$block_cols,
    "int64_t":$block_depth,
    "int64_t":$dot_cols,
    "int64_t":$dot_depth,
    DefaultValuedParameter<"int64_t", "1">:$gemv_panels,
    DefaultValuedParameter<"int64_t", "0">:$amx_block_cols,
    DefaultValuedParameter<"int64_t", "0">:$amx_block_depth,
    DefaultValuedParameter<"bool", "false">:$bf16_pairs
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tfm_GpuKernelKind : I32EnumAttr<"GpuKernelKind",
    "the kernel a GPU contraction is generated as", [
      I32EnumAttrCase<"wgmma", 0>,
      I32EnumAttrCase<"mma_sync", 1>,
      I32EnumAttrCase<"matvec", 2>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
}

def Tfm_GpuKernelAttr : AttrDef<Tfm_Dialect, "GpuKernel"> {
  let mnemonic = "gpu_kernel";
  let summary = "the kernel and tiles of one contraction on the GPU";
  let description = [{
    What `tfm-gpu-configure` chooses for one f16 matmul from the chip and
    the matmul's shape, recorded on it as `tfm.gpu_kernel`; the kernel
    passes (`tfm-gpu-warpgroup-matmul`, `tfm-gpu-tensor-core-matmul`,
    `tfm-gpu-matvec`) each rewrite only the matmuls of their kind, with
    these sizes:

    - `wgmma` (sm_90a): TMA + warpgroup MMA; `tile_m` x `tile_n` x
      `tile_k` the block tile (64 or 128 x 128 x 64), `warps` 4 (one
      warpgroup), `stages` the TMA pipeline depth;
    - `mma_sync`: ldmatrix + mma.sync; the block tile (64 x 64 x 32),
      `warps` 4 (2 x 2 over the tile), `stages` 2 (cp.async double
      buffering); an N that is not a multiple of `tile_n` leaves its last
      columns to another kernel;
    - `matvec` (decode, M <= 8): split-K kernels; `tile_m` the rows,
      `tile_n` the output columns of a block, `tile_k` the K of one split,
      `warps` 8, `stages` 1.

    ```mlir
    linalg.matmul {tfm.gpu_kernel = #tfm.gpu_kernel<kind = wgmma,
        tile_m = 128, tile_n = 128, tile_k = 64, warps = 4, stages = 3>}
    ```
  }];
  let parameters = (ins
    EnumParameter<Tfm_GpuKernelKind>:$kind,
    "int64_t":$tile_m,
    "int64_t":$tile_n,
    "int64_t":$tile_k,
    "int64_t":$warps,
    "int64_t":$stages
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Tfm_QuantFormat : I32EnumAttr<"QuantFormat",
    "block format of quantized weights", [
      I32EnumAttrCase<"q8_0", 0>,
      I32EnumAttrCase<"q4_0", 1>,
      I32EnumAttrCase<"q4_k", 2>,
      I32EnumAttrCase<"q6_k", 3>,
      I32EnumAttrCase<"q5_k", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tfm";
}

def Tfm_WeightQuantAttr : AttrDef<Tfm_Dialect, "WeightQuant"> {
  let mnemonic = "quant";
  let summary = "how a weight parameter is held quantized";
  let description = [{
    On a weight parameter as `tfm.param_quant` (`tfm-quantize-weights`, or
    a model file that stores its weights so): whoever binds weights holds
    the tensor in this block format, and the code generator reads the
    blocks. The argument keeps its logical f32 type; its value is the
    dequantized weights, which every lowering reads exactly.

    - `format`: `q8_0` (llama.cpp's Q8_0): blocks of 32 weights, each an
      int8 times one f16 scale `d = max |w| / 127` of its block; 34 bytes
      per 32 weights; `q4_0` (llama.cpp's Q4_0): blocks of 32 weights, each
      `(q - 8) * d` for a 4-bit `q` and one f16 scale `d` (the block's
      largest-magnitude weight over -8); 18 bytes per 32 weights; `q4_k`
      (llama.cpp's Q4_K): super-blocks of 256 weights in eight sub-blocks
      of 32, each weight `d * sc * q - dmin * m` for a 4-bit `q`, the
      sub-block's 6-bit scale `sc` and min `m`, and the super-block's f16
      `d` and `dmin`; 144 bytes per 256 weights; `q5_k` (llama.cpp's Q5_K):
      as `q4_k` with a 5-bit `q`, 176 bytes per 256 weights; `q6_k`
      (llama.cpp's Q6_K):
      super-blocks of 256 weights, each `d * sc * (q - 32)` for a 6-bit `q`,
      the signed 8-bit scale `sc` of its 16 weights and the super-block's
      f16 `d`; 210 bytes per 256 weights (tfm/Runtime/Quantize.h);
    - `axis`: the dimension of the stored matrix the blocks run along, the
      projection's K (0 for an `in_out` weight, 1 for `out_in`); its size
      is a multiple of the format's block (32, or 256 for the K formats).

    ```mlir
    %w: tensor<4096x4096xf32> {tfm.param = "q_proj.weight",
                               tfm.param_quant = #tfm.quant<q8_0, axis = 1>}
    ```
  }];
  let parameters = (ins EnumParameter<Tfm_QuantFormat>:$format,
                        "int64_t":$axis);
  let assemblyFormat = "`<` $format `,` `axis` `=` $axis `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Weights per block (32 for Q8_0 and Q4_0, a super-block of 256 for
    /// the K formats) and the bytes a block stores (its integers and
    /// scales).
    int64_t getBlockSize() const {
      return getFormat() == QuantFormat::q8_0 ||
                     getFormat() == QuantFormat::q4_0
                 ? 32
                 : 256;
    }
    int64_t getBlockBytes() const {
      switch (getFormat()) {
      case QuantFormat::q8_0:
        return 34;
      case QuantFormat::q4_0:
        return 18;
      case QuantFormat::q4_k:
        return 144;
      case QuantFormat::q5_k:
        return 176;
      case QuantFormat::q6_k:
        return 210;
      }
      return 0;
    }
  }];
}

def Tfm_ShardAttr : AttrDef<Tfm_Dialect, "Shard"> {
  let mnemonic = "shard";
  let summary = "which slice of a weight-file tensor each rank binds";
  let description = [{
    On a weight parameter of a tensor-parallel module (`tfm.param_shard`,
    written by `tfm-tensor-parallel`; the module's `tfm.tensor_parallel = N`
    is the number of ranks): the argument is one rank's slice of the
    weight-file tensor, and the rank (a runtime value, so that every rank
    runs the same compiled code) picks which.

    Dimension `axis` of the stored tensor is read as consecutive `pieces`
    (their sizes add up to the dimension: one piece for a plain projection,
    three for GPT-2's fused `c_attn`, two for Phi-3's `gate_up_proj`). Piece
    `i` is divided into `shards[i]` equal blocks and rank `r` binds block
    `r * shards[i] / N` of it; the blocks of every piece, concatenated in
    order, are the argument. `shards[i] = N` splits a piece across the
    ranks; a smaller count that divides `N` replicates each block on
    `N / shards[i]` consecutive ranks (key/value heads when there are fewer
    than ranks, as vLLM does).

    ```mlir
    %wq: tensor<2048x4096xf32> {tfm.param = "q_proj.weight",
        tfm.param_shard = #tfm.shard<axis = 0, pieces = [4096], shards = [2]>}
    ```
  }];
  let parameters = (ins "int64_t":$axis,
                        ArrayRefParameter<"int64_t">:$pieces,
                        ArrayRefParameter<"int64_t">:$shards);
  let assemblyFormat =
      "`<` `axis` `=` $axis `,` `pieces` `=` `[` $pieces `]` `,` `shards` `=` `[` $shards `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The extent of one rank's slice along `axis`.
    int64_t getSliceExtent() const;
  }];
}

#endif // TFM_ATTRS_TD
