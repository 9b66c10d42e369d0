//===- DType.h - element types of weight and array files --------*- C++ -*-===//
//
// The element types that .safetensors and .npy files carry, their sizes and
// spellings, and the conversions the runner needs between them (f16 and bf16
// are stored as raw 16-bit patterns; the host has no native type for them).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_DTYPE_H
#define TFM_RUNTIME_DTYPE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace mlir::tfm::runtime {

enum class DType : uint8_t { F64, F32, F16, BF16, I64, I32, I16, I8, U8, Bool };

/// Size of one element in bytes.
size_t getDTypeSize(DType dtype);
/// MLIR-style spelling: "f32", "bf16", "i64", "i1" ...
llvm::StringRef getDTypeName(DType dtype);
/// Safetensors spelling ("F32", "BF16", "I64", "BOOL", ...) to a DType.
std::optional<DType> parseSafeTensorsDType(llvm::StringRef name);
llvm::StringRef getSafeTensorsDTypeName(DType dtype);
bool isFloatDType(DType dtype);
bool isIntegerDType(DType dtype);

/// Product of the dimensions; std::nullopt if a dimension is negative or the
/// product (times `elementSize`) overflows 64 bits.
std::optional<uint64_t> getNumBytes(llvm::ArrayRef<int64_t> shape,
                                    size_t elementSize);
/// "1x8x256" ("scalar" for rank 0).
std::string formatShape(llvm::ArrayRef<int64_t> shape);

float halfToFloat(uint16_t bits);
uint16_t floatToHalf(float value);
float bfloat16ToFloat(uint16_t bits);
uint16_t floatToBFloat16(float value);

/// Whether `convertElements` can turn `from` into `to`: identity, i32 -> i64,
/// i64 -> i32 (range-checked element by element), and f16/bf16 -> f32 (exact).
/// Binding weights and inputs accepts only identity for floats (a silently
/// widened tensor would hide a mismatched model); the integer cases let token
/// ids come from either np.int32 or np.int64 arrays.
bool isSupportedConversion(DType from, DType to);
/// Whether `convertElements` can turn float type `from` into float type `to`,
/// both f32, f16 or bf16: exact when widening, rounded to the nearest even
/// value when narrowing (a checkpoint bound to a model of another compute
/// type).
bool isFloatConversion(DType from, DType to);
/// Converts `count` elements (a conversion isSupportedConversion or
/// isFloatConversion accepts). Returns the index of the first element that
/// does not fit the destination (an i64 outside the i32 range), or -1.
int64_t convertElements(const void *src, DType from, void *dst, DType to,
                        uint64_t count);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_DTYPE_H
