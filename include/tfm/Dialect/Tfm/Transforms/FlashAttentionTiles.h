//===- FlashAttentionTiles.h - default flash-attention tiles ----*- C++ -*-===//
//
// The flash-attention tile (query rows x key/value rows) that
// --tfm-flash-attention, the pipelines and the ledger's scratch estimate use
// unless told otherwise: one constant, so that the estimate describes the
// code the pipelines generate.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_DIALECT_TFM_TRANSFORMS_FLASHATTENTIONTILES_H
#define TFM_DIALECT_TFM_TRANSFORMS_FLASHATTENTIONTILES_H

#include <cstdint>

namespace mlir::tfm {

inline constexpr int64_t kDefaultFlashQueryTile = 64;
inline constexpr int64_t kDefaultFlashKeyTile = 64;

} // namespace mlir::tfm

#endif // TFM_DIALECT_TFM_TRANSFORMS_FLASHATTENTIONTILES_H
