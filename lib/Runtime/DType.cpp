//===- DType.cpp - element types of weight and array files ----------------===//
#include "tfm/Runtime/DType.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>
#include <limits>

using namespace mlir::tfm::runtime;

size_t mlir::tfm::runtime::getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
  case DType::I16:
    return 2;
  case DType::I8:
  case DType::U8:
  case DType::Bool:
    return 1;
  }
  llvm_unreachable("unknown dtype");
}

llvm::StringRef mlir::tfm::runtime::getDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F64: return "f64";
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I64: return "i64";
  case DType::I32: return "i32";
  case DType::I16: return "i16";
  case DType::I8: return "i8";
  case DType::U8: return "ui8";
  case DType::Bool: return "i1";
  }
  llvm_unreachable("unknown dtype");
}

std::optional<DType>
mlir::tfm::runtime::parseSafeTensorsDType(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<DType>>(name)
      .Case("F64", DType::F64)
      .Case("F32", DType::F32)
      .Case("F16", DType::F16)
      .Case("BF16", DType::BF16)
      .Case("I64", DType::I64)
      .Case("I32", DType::I32)
      .Case("I16", DType::I16)
      .Case("I8", DType::I8)
      .Case("U8", DType::U8)
      .Case("BOOL", DType::Bool)
      .Default(std::nullopt);
}

llvm::StringRef mlir::tfm::runtime::getSafeTensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F64: return "F64";
  case DType::F32: return "F32";
  case DType::F16: return "F16";
  case DType::BF16: return "BF16";
  case DType::I64: return "I64";
  case DType::I32: return "I32";
  case DType::I16: return "I16";
  case DType::I8: return "I8";
  case DType::U8: return "U8";
  case DType::Bool: return "BOOL";
  }
  llvm_unreachable("unknown dtype");
}

bool mlir::tfm::runtime::isFloatDType(DType dtype) {
  return dtype == DType::F64 || dtype == DType::F32 || dtype == DType::F16 ||
         dtype == DType::BF16;
}

bool mlir::tfm::runtime::isIntegerDType(DType dtype) {
  return !isFloatDType(dtype);
}

std::optional<uint64_t>
mlir::tfm::runtime::getNumBytes(llvm::ArrayRef<int64_t> shape,
                                size_t elementSize) {
  uint64_t total = elementSize;
  for (int64_t dim : shape) {
    if (dim < 0)
      return std::nullopt;
    bool overflow = false;
    total = llvm::SaturatingMultiply<uint64_t>(total, dim, &overflow);
    if (overflow)
      return std::nullopt;
  }
  return total;
}

std::string mlir::tfm::runtime::formatShape(llvm::ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string result;
  for (auto [i, dim] : llvm::enumerate(shape)) {
    if (i)
      result += 'x';
    result += std::to_string(dim);
  }
  return result;
}

static float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

static uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float mlir::tfm::runtime::halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  if (exponent == 0x1f) // Inf / NaN.
    return bitsToFloat(sign | 0x7f800000 | (mantissa << 13));
  if (exponent == 0) {
    // Zero or subnormal: value = mantissa * 2^-24.
    float magnitude = float(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t mlir::tfm::runtime::floatToHalf(float value) {
  uint32_t bits = floatToBits(value);
  uint16_t sign = (bits >> 16) & 0x8000;
  uint32_t absBits = bits & 0x7fffffff;
  if (absBits >= 0x7f800000) // Inf / NaN (keep NaN quiet).
    return sign | 0x7c00 | (absBits > 0x7f800000 ? 0x200 : 0);
  float magnitude = bitsToFloat(absBits);
  if (magnitude >= 65520.0f) // Rounds to infinity.
    return sign | 0x7c00;
  if (magnitude < 0x1p-14f) {
    // Subnormal half: round magnitude / 2^-24 to the nearest even integer;
    // the default FP rounding mode does exactly that for nearbyint.
    float scaled = magnitude * 0x1p24f;
    uint32_t m = uint32_t(scaled);
    float frac = scaled - float(m);
    if (frac > 0.5f || (frac == 0.5f && (m & 1)))
      ++m;
    return sign | uint16_t(m); // m == 0x400 is the smallest normal: correct.
  }
  // Normal: drop 13 mantissa bits with round-to-nearest-even; a carry into the
  // exponent is the correct result.
  uint32_t rebased = absBits - (112u << 23);
  uint32_t rounded = rebased + 0xfff + ((rebased >> 13) & 1);
  return sign | uint16_t(rounded >> 13);
}

float mlir::tfm::runtime::bfloat16ToFloat(uint16_t bits) {
  return bitsToFloat(uint32_t(bits) << 16);
}

uint16_t mlir::tfm::runtime::floatToBFloat16(float value) {
  uint32_t bits = floatToBits(value);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it a quiet NaN.
    return uint16_t((bits >> 16) | 0x40);
  uint32_t rounded = bits + 0x7fff + ((bits >> 16) & 1);
  return uint16_t(rounded >> 16);
}

bool mlir::tfm::runtime::isSupportedConversion(DType from, DType to) {
  if (from == to)
    return true;
  if ((from == DType::I32 || from == DType::I64) &&
      (to == DType::I32 || to == DType::I64))
    return true;
  return to == DType::F32 && (from == DType::F16 || from == DType::BF16);
}

bool mlir::tfm::runtime::isFloatConversion(DType from, DType to) {
  auto isComputeFloat = [](DType t) {
    return t == DType::F32 || t == DType::F16 || t == DType::BF16;
  };
  return isComputeFloat(from) && isComputeFloat(to);
}

template <typename T> static T load(const void *base, uint64_t i) {
  T value;
  std::memcpy(&value, static_cast<const char *>(base) + i * sizeof(T),
              sizeof(T));
  return value;
}

template <typename T> static void store(void *base, uint64_t i, T value) {
  std::memcpy(static_cast<char *>(base) + i * sizeof(T), &value, sizeof(T));
}

int64_t mlir::tfm::runtime::convertElements(const void *src, DType from,
                                            void *dst, DType to,
                                            uint64_t count) {
  if (from == to) {
    std::memcpy(dst, src, count * getDTypeSize(from));
    return -1;
  }
  if (from == DType::I32 && to == DType::I64) {
    for (uint64_t i = 0; i < count; ++i)
      store<int64_t>(dst, i, load<int32_t>(src, i));
    return -1;
  }
  if (from == DType::I64 && to == DType::I32) {
    for (uint64_t i = 0; i < count; ++i) {
      int64_t value = load<int64_t>(src, i);
      if (value < std::numeric_limits<int32_t>::min() ||
          value > std::numeric_limits<int32_t>::max())
        return int64_t(i);
      store<int32_t>(dst, i, int32_t(value));
    }
    return -1;
  }
  if (isFloatConversion(from, to)) {
    // Through f32, which holds every f16 and bf16 value exactly: one rounding.
    for (uint64_t i = 0; i < count; ++i) {
      float value = from == DType::F32   ? load<float>(src, i)
                    : from == DType::F16 ? halfToFloat(load<uint16_t>(src, i))
                                         : bfloat16ToFloat(load<uint16_t>(src, i));
      if (to == DType::F32)
        store<float>(dst, i, value);
      else
        store<uint16_t>(dst, i,
                        to == DType::F16 ? floatToHalf(value)
                                         : floatToBFloat16(value));
    }
    return -1;
  }
  llvm_unreachable("unsupported conversion; check isSupportedConversion first");
}
