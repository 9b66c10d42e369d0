//===- Normalization.cpp - Unicode normalization form C -------------------===//
//
// NFC as UAX #15 defines it: every character fully decomposed (canonical
// mappings, precomputed in the table; Hangul syllables by arithmetic),
// non-starters stably sorted by combining class, then each character
// composed with the last starter unless a character between them blocks it.
//
//===----------------------------------------------------------------------===//
#include "Unicode.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir::tfm::tokenizer;

namespace {
struct ClassRange {
  uint32_t first, last;
  uint8_t ccc;
};
struct Decomposition {
  uint32_t cp;
  uint32_t offset, length;
};
struct Composition {
  uint32_t first, second, composite;
};
} // namespace

static const ClassRange kCombiningClasses[] = {
#define TFM_COMBINING_CLASSES
#include "NormalizationTables.inc"
#undef TFM_COMBINING_CLASSES
};
static const Decomposition kDecompositions[] = {
#define TFM_DECOMPOSITIONS
#include "NormalizationTables.inc"
#undef TFM_DECOMPOSITIONS
};
static const uint32_t kDecomposedCodePoints[] = {
#define TFM_DECOMPOSED_CODE_POINTS
#include "NormalizationTables.inc"
#undef TFM_DECOMPOSED_CODE_POINTS
};
static const Composition kCompositions[] = {
#define TFM_COMPOSITIONS
#include "NormalizationTables.inc"
#undef TFM_COMPOSITIONS
};

// Hangul syllables (Unicode section 3.12).
static constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161,
                          kTBase = 0x11A7, kLCount = 19, kVCount = 21,
                          kTCount = 28, kNCount = kVCount * kTCount,
                          kSCount = kLCount * kNCount;

static uint8_t getCombiningClass(uint32_t cp) {
  const ClassRange *it = llvm::partition_point(
      kCombiningClasses, [&](const ClassRange &r) { return r.last < cp; });
  if (it == std::end(kCombiningClasses) || it->first > cp)
    return 0;
  return it->ccc;
}

static void decompose(uint32_t cp, std::vector<uint32_t> &out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount)
      out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition *it = llvm::partition_point(
      kDecompositions, [&](const Decomposition &d) { return d.cp < cp; });
  if (it == std::end(kDecompositions) || it->cp != cp) {
    out.push_back(cp);
    return;
  }
  out.insert(out.end(), kDecomposedCodePoints + it->offset,
             kDecomposedCodePoints + it->offset + it->length);
}

static std::optional<uint32_t> compose(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase &&
      b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 &&
      b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const Composition *it =
      llvm::partition_point(kCompositions, [&](const Composition &c) {
        return c.first != a ? c.first < a : c.second < b;
      });
  if (it == std::end(kCompositions) || it->first != a || it->second != b)
    return std::nullopt;
  return it->composite;
}

std::string mlir::tfm::tokenizer::normalizeNfc(llvm::StringRef text) {
  // ASCII is its own NFC.
  if (llvm::all_of(text, [](char c) { return uint8_t(c) < 0x80; }))
    return text.str();
  std::vector<uint32_t> cps;
  for (uint32_t cp : decodeUtf8(text).codePoints)
    decompose(cp, cps);
  // Canonical ordering: each run of non-starters sorted by class, stably.
  for (size_t i = 0; i < cps.size();) {
    if (!getCombiningClass(cps[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < cps.size() && getCombiningClass(cps[end]))
      ++end;
    // Insertion sort: stable, and the runs are short.
    for (size_t j = i + 1; j < end; ++j)
      for (size_t k = j;
           k > i && getCombiningClass(cps[k - 1]) > getCombiningClass(cps[k]);
           --k)
        std::swap(cps[k - 1], cps[k]);
    i = end;
  }
  // Composition: a character joins the last starter when nothing between
  // them has a class of 0 or at least its own.
  std::vector<uint32_t> out;
  std::optional<size_t> starter;
  uint8_t lastClass = 0;
  for (uint32_t cp : cps) {
    uint8_t ccc = getCombiningClass(cp);
    if (starter) {
      bool adjacent = *starter + 1 == out.size();
      if (adjacent || (lastClass != 0 && lastClass < ccc)) {
        if (std::optional<uint32_t> c = compose(out[*starter], cp)) {
          out[*starter] = *c;
          continue;
        }
      }
    }
    if (ccc == 0)
      starter = out.size();
    out.push_back(cp);
    lastClass = ccc;
  }
  std::string result;
  for (uint32_t cp : out)
    appendUtf8(result, cp);
  return result;
}
