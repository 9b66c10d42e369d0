//===- FlashAttentionKernel.h - the flash-attention kernel text -*- C++ -*-===//
//
// What the flash-attention passes (GpuFlashAttention.cpp) need of the kernel
// FlashAttentionKernel.cpp writes: the attention shape it is built for, how
// many ways it splits the keys, and its source. Private to lib/Codegen/GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_GPU_FLASHATTENTIONKERNEL_H
#define TFM_LIB_CODEGEN_GPU_FLASHATTENTIONKERNEL_H

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/bit.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdint>
#include <string>

namespace mlir::tfm::gpu_kernels {

struct AttentionShape {
  int64_t batch, heads, kvHeads, queries, keys, headDim;
  bool causal;
  double scale;
  /// Split-KV: blocks of one query tile split the key tiles this many ways,
  /// and a second kernel combines their partial results.
  int64_t splits = 1;

  std::string key() const {
    return llvm::formatv("{0}x{1}x{2}x{3}_{4}x{5}_{6}_{7:x}_{8}", batch, heads,
                         queries, headDim, kvHeads, keys, causal ? "c" : "n",
                         llvm::bit_cast<uint64_t>(scale), splits);
  }
};

/// Split-KV for one query tile (decode, short chunks) over many keys when
/// (batch, head) blocks alone would leave most of a GPU idle: the splits for
/// `s`, 1 for none.
int64_t splitCount(const AttentionShape &s);

/// The private host function `name(q, k, v, offset, out)` (with split-KV
/// also the partial results' scratch buffers) launching the kernel for `s`
/// (f16 q/k/v buffers, f32 out).
std::string buildFlashAttentionKernel(llvm::StringRef name,
                                      const AttentionShape &s);

} // namespace mlir::tfm::gpu_kernels

#endif // TFM_LIB_CODEGEN_GPU_FLASHATTENTIONKERNEL_H
