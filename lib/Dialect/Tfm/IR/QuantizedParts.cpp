//===- QuantizedParts.cpp - the arguments a quantized weight is bound as --===//
#include "tfm/Dialect/Tfm/IR/QuantizedParts.h"
#include "tfm/Dialect/Tfm/IR/TfmAttrNames.h"

using namespace mlir;
using namespace mlir::tfm;

namespace {
struct PartName {
  QuantFormat format;
  QuantizedPart part;
  llvm::StringLiteral name;
};
} // namespace

static const PartName kPartNames[] = {
    {QuantFormat::q8_0, QuantizedPart::Values, kQ8_0ValuesWeightFormat},
    {QuantFormat::q8_0, QuantizedPart::Scales, kQ8_0ScalesWeightFormat},
    {QuantFormat::q4_0, QuantizedPart::Values, kQ4_0ValuesWeightFormat},
    {QuantFormat::q4_0, QuantizedPart::Scales, kQ4_0ScalesWeightFormat},
    {QuantFormat::q4_k, QuantizedPart::Values, kQ4_KValuesWeightFormat},
    {QuantFormat::q4_k, QuantizedPart::Scales, kQ4_KScalesWeightFormat},
    {QuantFormat::q4_k, QuantizedPart::Super, kQ4_KSuperWeightFormat},
    {QuantFormat::q5_k, QuantizedPart::Values, kQ5_KValuesWeightFormat},
    {QuantFormat::q5_k, QuantizedPart::Scales, kQ5_KScalesWeightFormat},
    {QuantFormat::q5_k, QuantizedPart::Super, kQ5_KSuperWeightFormat},
    {QuantFormat::q6_k, QuantizedPart::Values, kQ6_KValuesWeightFormat},
    {QuantFormat::q6_k, QuantizedPart::Scales, kQ6_KScalesWeightFormat},
    {QuantFormat::q6_k, QuantizedPart::Super, kQ6_KSuperWeightFormat},
};

/// Whether `format` has super-blocks of 256 (the K formats).
static bool hasSuperBlocks(QuantFormat format) {
  return format == QuantFormat::q4_k || format == QuantFormat::q5_k ||
         format == QuantFormat::q6_k;
}

SmallVector<QuantizedPart, 3> mlir::tfm::getQuantizedParts(QuantFormat format) {
  if (hasSuperBlocks(format))
    return {QuantizedPart::Values, QuantizedPart::Super, QuantizedPart::Scales};
  return {QuantizedPart::Values, QuantizedPart::Scales};
}

StringRef mlir::tfm::getQuantizedPartName(QuantFormat format,
                                          QuantizedPart part) {
  for (const PartName &entry : kPartNames)
    if (entry.format == format && entry.part == part)
      return entry.name;
  return {};
}

std::optional<std::pair<QuantFormat, QuantizedPart>>
mlir::tfm::parseQuantizedPartName(StringRef name) {
  for (const PartName &entry : kPartNames)
    if (entry.name == name)
      return std::make_pair(entry.format, entry.part);
  return std::nullopt;
}

bool mlir::tfm::isF16QuantizedPart(QuantFormat format, QuantizedPart part) {
  return part == QuantizedPart::Super ||
         (part == QuantizedPart::Scales && !hasSuperBlocks(format));
}

bool mlir::tfm::isNibbleFormat(QuantFormat format) {
  return format == QuantFormat::q4_0 || format == QuantFormat::q4_k;
}

bool mlir::tfm::isSixBitValues(QuantFormat format, int64_t group) {
  return format == QuantFormat::q6_k && group == 4;
}

int64_t mlir::tfm::getBlockValueBytes(QuantFormat format, int64_t group) {
  if (isNibbleFormat(format))
    return 16;
  return isSixBitValues(format, group) ? 24 : 32;
}

SmallVector<int64_t, 5>
mlir::tfm::getQuantizedPartShape(QuantFormat format, QuantizedPart part,
                                 int64_t panels, int64_t k, int64_t panel,
                                 int64_t group) {
  bool mins = format == QuantFormat::q4_k || format == QuantFormat::q5_k;
  switch (part) {
  case QuantizedPart::Values: {
    int64_t blockBytes = getBlockValueBytes(format, group);
    SmallVector<int64_t, 5> shape{panels, k / 32, blockBytes / group, panel};
    if (group > 1)
      shape.push_back(group);
    return shape;
  }
  case QuantizedPart::Scales:
    if (mins)
      return {panels, k / 32, 2, panel};
    if (format == QuantFormat::q6_k)
      return {panels, k / 16, panel};
    return {panels, k / 32, panel};
  case QuantizedPart::Super:
    if (mins)
      return {panels, k / 256, 2, panel};
    return {panels, k / 256, panel};
  }
  return {};
}
