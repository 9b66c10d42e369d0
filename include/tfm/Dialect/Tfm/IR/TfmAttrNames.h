//===- TfmAttrNames.h - names of tfm's discardable attributes ---*- C++ -*-===//
//
// The attributes that carry a tfm model's interface from one component to
// the next -- the importer and the frontend to the pipelines, the pipelines
// to the runtime that binds weights and buffers -- spelled once. Only
// llvm/ADT/StringRef.h: the runtime and tools include this without the
// dialect's generated headers.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_IR_TFMATTRNAMES_H
#define TFM_DIALECT_TFM_IR_TFMATTRNAMES_H

#include "llvm/ADT/StringRef.h"

namespace mlir::tfm {

//===----------------------------------------------------------------------===//
// Entry function arguments and results
//===----------------------------------------------------------------------===//

/// The argument attribute that names a parameter in the weight file.
inline constexpr llvm::StringLiteral kParamAttrName = "tfm.param";
/// The argument attribute naming a runtime input (`.npy` file, token ids).
inline constexpr llvm::StringLiteral kInputAttrName = "tfm.input";
/// The result attribute naming an output.
inline constexpr llvm::StringLiteral kOutputAttrName = "tfm.output";
/// The argument attribute naming a KV cache tensor ("<layer>.key" /
/// "<layer>.value"), also set as result attribute on the updated cache.
inline constexpr llvm::StringLiteral kKVCacheAttrName = "tfm.kv_cache";

/// On a parameter built by concatenating weight-file tensors (e.g. by
/// --tfm-fuse-qkv): the names of the parts, in order, and the axis.
inline constexpr llvm::StringLiteral kParamPartsAttrName = "tfm.param_parts";
inline constexpr llvm::StringLiteral kParamConcatAxisAttrName =
    "tfm.param_concat_axis";
/// On a parameter the CPU pipeline reads in the GEMM micro-kernel's panel
/// layout (tfm-cpu-pack-weights): how to pack the weight-file tensor.
inline constexpr llvm::StringLiteral kParamPackAttrName = "tfm.param_pack";
/// The `format` of a tfm.param_pack whose weight is bound as the three bf16
/// parts AMX tiles read (tfm-cpu-split-amx-weights); absent: f32 panels.
inline constexpr llvm::StringLiteral kAmxSplitWeightFormat = "amx_bf16x3";
/// The `format` of a bf16 weight bound in the order AMX tiles read B (K
/// pairs interleaved), one part.
inline constexpr llvm::StringLiteral kAmxPairedWeightFormat = "amx_bf16";
/// The `format` of a bf16 weight bound in panels with its K pairs
/// interleaved, [J, K / 2, panel, 2], as AVX512-BF16's pair dot products
/// read B (tfm-cpu-pack-weights with `bf16_pairs` planned).
inline constexpr llvm::StringLiteral kBf16PairsWeightFormat = "bf16_pairs";
/// On a parameter whose weight-file tensor has another element type than the
/// argument (a bf16 checkpoint bound to an f32 model, converted when bound):
/// that type, as a TypeAttr. The ledger counts the parameter's bytes in it.
inline constexpr llvm::StringLiteral kParamDTypeAttrName = "tfm.param_dtype";
/// On a parameter whose weights are held quantized (tfm-quantize-weights,
/// or a model file that stores them so): a #tfm.quant<format, axis = K's
/// dimension>. Verified by the dialect.
inline constexpr llvm::StringLiteral kParamQuantAttrName = "tfm.param_quant";
/// The `format`s of the two arguments a Q8_0 weight is bound as
/// (tfm-cpu-pack-weights): its int8 values [N, K / 32, 32] and its scales
/// [N, K / 32] (f16), weight row n being output column n.
inline constexpr llvm::StringLiteral kQ8_0ValuesWeightFormat = "q8_0_values";
inline constexpr llvm::StringLiteral kQ8_0ScalesWeightFormat = "q8_0_scales";
/// The same for a Q4_0 weight: its 4-bit values, two K steps a byte as
/// llama.cpp's blocks hold them ([N, K / 32, 16] bytes, byte u of a block
/// holding steps u and u + 16 in its low and high nibble), and its scales.
inline constexpr llvm::StringLiteral kQ4_0ValuesWeightFormat = "q4_0_values";
inline constexpr llvm::StringLiteral kQ4_0ScalesWeightFormat = "q4_0_scales";
/// The three a Q4_K weight is bound as: its 4-bit values as Q4_0's (each
/// block of 32 a sub-block), its sub-blocks' 6-bit scales and mins ([N, K /
/// 32, 2] bytes: sc, m) and its super-blocks' f16 d and dmin ([N, K / 256,
/// 2]).
inline constexpr llvm::StringLiteral kQ4_KValuesWeightFormat = "q4_k_values";
inline constexpr llvm::StringLiteral kQ4_KScalesWeightFormat = "q4_k_scales";
inline constexpr llvm::StringLiteral kQ4_KSuperWeightFormat = "q4_k_super";
/// The three a Q5_K weight is bound as: its 5-bit q (0..31) a byte a K
/// step as Q8_0's values, and Q4_K's scales and mins and super-blocks.
inline constexpr llvm::StringLiteral kQ5_KValuesWeightFormat = "q5_k_values";
inline constexpr llvm::StringLiteral kQ5_KScalesWeightFormat = "q5_k_scales";
inline constexpr llvm::StringLiteral kQ5_KSuperWeightFormat = "q5_k_super";
/// The three a Q6_K weight is bound as: its 6-bit q (0..63) a byte a K step
/// as Q8_0's values (for int8 dot products in 6 bits: isSixBitValues), the
/// signed 8-bit scale of each 16 weights ([N, K / 16]) and its
/// super-blocks' f16 d ([N, K / 256]).
inline constexpr llvm::StringLiteral kQ6_KValuesWeightFormat = "q6_k_values";
inline constexpr llvm::StringLiteral kQ6_KScalesWeightFormat = "q6_k_scales";
inline constexpr llvm::StringLiteral kQ6_KSuperWeightFormat = "q6_k_super";
/// On a parameter of a tensor-parallel module: the #tfm.shard slice of its
/// weight-file tensor each rank binds (tfm-tensor-parallel). Verified by
/// the dialect.
inline constexpr llvm::StringLiteral kParamShardAttrName = "tfm.param_shard";
/// On a parameter of a tensor-parallel module that each rank binds from a
/// different tensor (an expert of an expert-parallel tfm.moe: rank r holds
/// experts [r E/N, (r + 1) E/N)): the weight-file names, one per rank, rank
/// r binding element r. `tfm.param` is rank 0's. Verified by the dialect.
inline constexpr llvm::StringLiteral kParamRankNamesAttrName =
    "tfm.param_rank_names";
/// On a module partitioned for tensor parallelism: the number of ranks
/// (an i64), which its collectives and every tfm.param_shard refer to.
inline constexpr llvm::StringLiteral kTensorParallelAttrName =
    "tfm.tensor_parallel";
/// On a parameter argument of a narrower float type than the model's (the
/// GPU pipeline reads matmul weights as f16, --tfm-gpu-contraction-dtype):
/// whoever binds weights rounds the weight-file tensor to the argument's
/// type once, whatever its type in the file.
inline constexpr llvm::StringLiteral kParamRoundedAttrName =
    "tfm.param_rounded";

//===----------------------------------------------------------------------===//
// Functions and ops
//===----------------------------------------------------------------------===//

/// The function attribute that marks a decoder block (input type == output
/// type).
inline constexpr llvm::StringLiteral kBlockAttrName = "tfm.block";
/// On an entry function after tfm-plan-workspace: {bytes, buffers,
/// unplanned}, the one workspace its temporaries share.
inline constexpr llvm::StringLiteral kWorkspaceAttrName = "tfm.workspace";
/// On an external function (a runtime micro-kernel): it reads and writes
/// its memref arguments only while a call runs and keeps no pointer to
/// them, so buffers passed to it may share a workspace (tfm-plan-workspace).
inline constexpr llvm::StringLiteral kNoCaptureAttrName = "tfm.nocapture";
/// The CPU code generation plan: the target (on the module) and each
/// contraction's tiling (on the op), from tfm-cpu-configure.
inline constexpr llvm::StringLiteral kCpuTargetAttrName = "tfm.cpu_target";
inline constexpr llvm::StringLiteral kCpuTilingAttrName = "tfm.cpu_tiling";
/// #tfm.gpu_kernel on a GPU contraction: its kernel and tiles
/// (tfm-gpu-configure).
inline constexpr llvm::StringLiteral kGpuKernelAttrName = "tfm.gpu_kernel";

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_IR_TFMATTRNAMES_H
