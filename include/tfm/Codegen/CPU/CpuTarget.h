//===- CpuTarget.h - what the CPU code generator needs of a target -*- C++ -*-===//
//
// The few facts about a CPU that decide tile sizes: the widest f32 SIMD
// register, how many of them there are, whether it has FMA, and the data
// cache sizes. They come from LLVM's description of a named CPU (the
// pipeline's `cpu=` option, like `-mcpu`) or from the host, never from
// constants tuned on one machine. The tiling *policy* that turns them into
// tile sizes is `deriveContractionTiling`; the mechanism that applies tile
// sizes lives in the codegen passes and reads them from the IR.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_PIPELINES_CPUTARGET_H
#define TFM_PIPELINES_CPUTARGET_H

#include "tfm/Codegen/Common/OptionGroup.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace mlir::tfm {

/// The int8 kernels' prefetch distance (bytes) where nothing measured
/// another: the one distance they took before plans carried theirs, the
/// best of 1-4 KiB on Q4_0 on an Intel AVX-512 VNNI host.
inline constexpr int64_t kDefaultInt8Prefetch = 2048;

struct CpuTarget {
  /// LLVM's name of the CPU (e.g. "znver3", "skylake-avx512").
  std::string cpu;
  /// Width of the widest SIMD register usable for f32 (128, 256 or 512).
  unsigned vectorBits = 128;
  /// Number of such registers (16 with AVX2, 32 with AVX-512).
  unsigned vectorRegisters = 16;
  bool hasFMA = false;
  /// AMX tiles with bf16 dot products (Sapphire Rapids and later), by the
  /// CPU's features. Whether Linux lets a process use the tile data is
  /// requestAmxTilePermission's: tfm-cpu-configure asks for the host only
  /// when it would plan tiles.
  bool hasAmxBf16 = false;
  /// AVX512-BF16's pair dot product (`vdpbf16ps`: two bf16 products per f32
  /// lane and instruction, twice an f32 FMA's rate): Cooper Lake, Zen 4 and
  /// later, Sapphire Rapids and later.
  bool hasAvx512Bf16 = false;
  /// AVX-512 VNNI's int8 dot product (`vpdpbusd`: four u8 x s8 products per
  /// i32 lane and instruction) with AVX512-BW: Cascade Lake, Ice Lake, Zen
  /// 4 and later.
  bool hasAvx512Vnni = false;
  /// AMX tiles with int8 dot products (`tdpbssd`, `tdpbsud`: a 16 x 64 by
  /// 64 x 16 int8 product an instruction) beside AVX-512 VNNI: Sapphire
  /// Rapids and later. Whether Linux lets a process use the tile data is
  /// requestAmxTilePermission's, as for hasAmxBf16.
  bool hasAmxInt8 = false;
  /// The vector registers one row of an int8 decode GEMV accumulates in
  /// (the micro-kernels' `decode_vectors`): 8 with AVX-512, two 64-column
  /// panels streamed side by side, but 4 on AMD's Zen cores, one panel at a
  /// time, whose one core reads fewer streams faster (docs/design.md, "Int8
  /// panels"); 4 with AVX2.
  int64_t int8DecodeVectors = 4;
  /// How far ahead (bytes) the int8 kernels prefetch the values of the
  /// formats packed below a byte a K step (Q4_0, Q4_K, Q6_K's 6 bits); 0,
  /// no prefetch. By the int8 kernels' instruction set and the CPU's name
  /// (docs/design.md, "Int8 prefetch").
  int64_t int8PrefetchPacked = kDefaultInt8Prefetch;
  /// Likewise for the formats a byte a K step (Q8_0, Q5_K).
  int64_t int8PrefetchBytewise = kDefaultInt8Prefetch;
  /// Per-core data caches in bytes.
  int64_t l1Bytes = 32 * 1024;
  int64_t l2Bytes = 512 * 1024;

  /// f32 lanes of one vector register.
  int64_t lanes() const { return vectorBits / 32; }

  /// The target named `cpu` ("host" or empty: the machine this runs on, or
  /// the CPU resolveCpuName gives it). Fails with a message naming the CPU
  /// when LLVM does not know it.
  static llvm::Expected<CpuTarget> lookup(llvm::StringRef cpu);
};

/// The environment variable that names the CPU "host" stands for
/// (`TFM_CPU=x86-64-v3` plans and emits AVX2 code on an AVX-512 machine).
inline constexpr const char *kCpuEnvironmentVariable = "TFM_CPU";

/// The CPU that `cpu` names: itself when it names one; for "host" or empty,
/// the CPU named by $TFM_CPU when that is set and not "host", else "host"
/// (this machine). Every consumer of the `cpu=` option (the plan, the
/// machine code, the code cache's key) resolves it through here, so that
/// one variable moves all of them together.
std::string resolveCpuName(llvm::StringRef cpu);

/// Tile sizes of the contraction code generator (all in elements).
struct ContractionTiling {
  int64_t registerRows = 0; // rows of the register tile (M)
  int64_t registerCols = 0; // columns of the register tile (N, the vectors)
  // The fewest rows of a shorter register tile taken for an M that the
  // planned rows do not divide, instead of the planned rows and a remainder
  // tile (equal to registerRows: no shorter tile; 0 in withOverrides'
  // overrides: derived).
  int64_t minRegisterRows = 0;
  int64_t blockRows = 0;    // cache block (M)
  int64_t blockCols = 0;    // cache block (N)
  int64_t blockDepth = 0;   // cache block (K)
  int64_t dotCols = 0;      // rows of B per dot-product tile (few rows)
  int64_t dotDepth = 0;     // vector width of the dot-product partial sums
  // Panels of a packed B that a one-row register tile reads at once (a
  // decode step's GEMV): one panel is one sequential stream of the weight.
  int64_t gemvPanels = 1;
  // f32 GEMMs on AMX tiles as six bf16 products (0: not planned): the
  // columns of B one thread converts and keeps at a time, and the K block.
  int64_t amxBlockCols = 0;
  int64_t amxBlockDepth = 0;
  // bf16 GEMMs (a bf16 model's projections) as AVX512-BF16 pair dot
  // products (0: not planned, 1: planned): the weight is packed with its K
  // pairs interleaved and each K step of the register tile is two deep.
  int64_t bf16Pairs = 0;
};

/// The tiling policy: register tiles that keep every accumulator, the B
/// vectors of one K step and one broadcast A element in registers (no
/// spills), with up to four vectors per row; cache blocks sized so that the
/// B block stays in L2 and one K slice of A and B in L1 (f32 and bf16/f16
/// contractions alike).
/// With `useAmx` and a target with AMX-BF16, the plan also sizes the AMX
/// form of f32 GEMMs (amxBlockCols/amxBlockDepth; see CpuAmxContractions).
/// With `useBf16Dot` and a 512-bit target with AVX512-BF16 on which no AMX
/// is planned, bf16 GEMMs are planned as pair dot products (bf16Pairs).
ContractionTiling deriveContractionTiling(const CpuTarget &target,
                                          bool useAmx = false,
                                          bool useBf16Dot = false);

/// Asks Linux for this process's permission to use AMX tile data (needed
/// once per process before any tile instruction; Linux 5.16+). Returns
/// whether the process may use the tiles; false elsewhere.
bool requestAmxTilePermission();

/// Overrides of single fields of the derived tiling (0: as derived), for
/// experiments and tests: tfm-cpu-configure's and the CPU pipeline's
/// `tiling` option, e.g. `tiling=register-rows=4,block-cols=256`.
struct CpuTilingOverrides : OptionGroup<CpuTilingOverrides> {
  int64_t registerRows = 0;
  int64_t minRegisterRows = 0;
  int64_t registerCols = 0;
  int64_t blockRows = 0;
  int64_t blockCols = 0;
  int64_t blockDepth = 0;
  int64_t dotCols = 0;
  int64_t dotDepth = 0;
  int64_t gemvPanels = 0;
  int64_t amxBlockCols = 0;
  int64_t amxBlockDepth = 0;

  static llvm::ArrayRef<OptionGroupField<CpuTilingOverrides>> getFields();
};

/// `tiling` with each non-zero field of `overrides` replacing its value;
/// minRegisterRows is derived again for the register tile that results
/// unless it is overridden itself.
ContractionTiling withOverrides(const CpuTarget &target,
                                ContractionTiling tiling,
                                const CpuTilingOverrides &overrides);

} // namespace mlir::tfm

namespace llvm::cl {
template <>
class parser<mlir::tfm::CpuTilingOverrides>
    : public mlir::tfm::OptionGroupParser<mlir::tfm::CpuTilingOverrides> {
public:
  using OptionGroupParser::OptionGroupParser;
};
} // namespace llvm::cl

#endif // TFM_PIPELINES_CPUTARGET_H
