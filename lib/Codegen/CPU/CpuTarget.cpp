//===- CpuTarget.cpp - CPU facts and the tiling policy built on them ------===//
#include "tfm/Codegen/CPU/CpuTarget.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/bit.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <unistd.h>

using namespace mlir::tfm;

/// Vector facts from LLVM feature names (x86 today; other architectures get
/// the conservative 128-bit, 16-register description).
static void applyFeatures(CpuTarget &target,
                          llvm::function_ref<bool(llvm::StringRef)> has) {
  if (has("avx512f")) {
    target.vectorBits = 512;
    target.vectorRegisters = 32;
  } else if (has("avx")) {
    target.vectorBits = 256;
    target.vectorRegisters = 16;
  } else {
    target.vectorBits = 128;
    target.vectorRegisters = 16;
  }
  target.hasFMA = has("fma") || has("avx512f");
  // The split of f32 into bf16 parts uses AVX512-BF16's conversion, which
  // every AMX-BF16 CPU has.
  target.hasAmxBf16 =
      has("amx-tile") && has("amx-bf16") && has("avx512bf16");
  target.hasAvx512Bf16 = has("avx512bf16") && has("avx512vl");
  target.hasAvx512Vnni = has("avx512vnni") && has("avx512bw");
  // The int8 tile kernels scale their sums with AVX-512 (VNNI's variant is
  // their fallback).
  target.hasAmxInt8 =
      has("amx-tile") && has("amx-int8") && target.hasAvx512Vnni;
}

#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
bool mlir::tfm::requestAmxTilePermission() {
  // ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA (asm/prctl.h, 5.16+).
  constexpr long kArchReqXcompPerm = 0x1023;
  constexpr long kXfeatureXtiledata = 18;
  static const bool granted =
      syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  return granted;
}
#else
bool mlir::tfm::requestAmxTilePermission() { return false; }
#endif

/// Whether `target` names one of AMD's Zen cores.
static bool isAmdZen(const CpuTarget &target) {
  return llvm::StringRef(target.cpu).starts_with("znver");
}

/// The int8 decode GEMV's accumulators (CpuTarget::int8DecodeVectors), by
/// the vector width and the CPU's name: 4 on AMD's Zen cores, where a Zen 4
/// decodes 8-13% faster streaming one 64-column panel at a time than two;
/// 8 on Intel's, where two 64-column panels read faster than one of 128
/// (docs/design.md, "Int8 panels").
static int64_t getInt8DecodeVectors(const CpuTarget &target) {
  if (target.vectorBits < 512)
    return 4;
  return isAmdZen(target) ? 4 : 8;
}

/// The int8 kernels' prefetch distances (CpuTarget::int8PrefetchPacked,
/// int8PrefetchBytewise), measured on a decode step's GEMVs (docs/design.md,
/// "Int8 prefetch"). AVX-512 VNNI's kernels: none on AMD's Zen (the Zen 4
/// streamed Q8_0 faster without, Q4_0 no faster with any); elsewhere the
/// default. AVX2's (also AVX-512 without VNNI's): on Zen and the generic
/// x86-64 levels, measured on a Zen 4 running x86-64-v3 code, 8 KiB for
/// the packed formats (Q4_0 streamed 27 GB/s against 21) and none for the
/// bytewise ones (Q8_0 30 against 20-25); elsewhere (Intel's AVX2 cores,
/// not measured) the default.
static void applyInt8Prefetch(CpuTarget &target) {
  bool avx512Kernels = target.vectorBits >= 512 && target.hasAvx512Vnni;
  bool zen = isAmdZen(target);
  bool measuredAvx2 = zen || llvm::StringRef(target.cpu).starts_with("x86-64");
  if (avx512Kernels ? zen : measuredAvx2) {
    target.int8PrefetchPacked = avx512Kernels ? 0 : 8192;
    target.int8PrefetchBytewise = 0;
  } else {
    target.int8PrefetchPacked = target.int8PrefetchBytewise =
        kDefaultInt8Prefetch;
  }
}

/// Typical per-core caches of a CPU generation, for named targets (LLVM's
/// CPU descriptions carry no cache sizes).
static void applyTypicalCaches(CpuTarget &target) {
  if (target.vectorBits >= 512) {
    target.l1Bytes = 48 * 1024;
    target.l2Bytes = 1024 * 1024;
  } else {
    target.l1Bytes = 32 * 1024;
    target.l2Bytes = 512 * 1024;
  }
}

/// LLVM's description of the CPU named `cpu` for this process's triple (the
/// JIT's); an error naming the CPU where LLVM does not know it.
static llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>>
getSubtargetInfo(llvm::StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *llvmTarget =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!llvmTarget)
    return llvm::createStringError(
        llvm::formatv("cpu '{0}': no LLVM target for {1}: {2}", cpu,
                      triple.str(), error));
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      llvmTarget->createMCSubtargetInfo(triple, cpu, ""));
  if (!info || !info->isCPUStringValid(cpu))
    return llvm::createStringError(
        llvm::formatv("cpu '{0}' is not a CPU LLVM knows for {1} (try "
                      "`llc -mcpu=help`, or 'host')",
                      cpu, triple.str()));
  return info;
}

std::string mlir::tfm::resolveCpuName(llvm::StringRef cpu) {
  if (!cpu.empty() && cpu != "host")
    return cpu.str();
  const char *forced = std::getenv(kCpuEnvironmentVariable);
  if (forced && *forced && llvm::StringRef(forced) != "host")
    return forced;
  return "host";
}

llvm::Expected<CpuTarget> CpuTarget::lookup(llvm::StringRef requested) {
  CpuTarget target;
  std::string cpu = resolveCpuName(requested);
  if (cpu == "host") {
    target.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    applyFeatures(target,
                  [&](llvm::StringRef f) { return features.lookup(f); });
    applyTypicalCaches(target);
    // The machine's own caches where the OS reports them (VMs may not).
    if (long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE); l1 > 0)
      target.l1Bytes = l1;
    if (long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE); l2 > 0)
      target.l2Bytes = l2;
    target.int8DecodeVectors = getInt8DecodeVectors(target);
    applyInt8Prefetch(target);
    return target;
  }

  auto info = getSubtargetInfo(cpu);
  if (!info)
    return info.takeError();
  target.cpu = cpu;
  applyFeatures(target, [&](llvm::StringRef f) {
    return (*info)->checkFeatures(("+" + f).str());
  });
  applyTypicalCaches(target);
  target.int8DecodeVectors = getInt8DecodeVectors(target);
  applyInt8Prefetch(target);
  return target;
}

/// Largest power of two <= n (n >= 1).
static int64_t floorPowerOfTwo(int64_t n) {
  return int64_t(llvm::bit_floor(uint64_t(n)));
}

/// Independent FMAs a core must have in flight to keep its FMA pipes busy:
/// a 4-cycle latency times 2 pipes on the x86 cores with FMA (Haswell and
/// later, Zen and later).
static constexpr int64_t kFmaInFlight = 8;

/// The fewest rows of a register tile worth taking, for an M the planned
/// rows do not divide, instead of the planned rows and a remainder tile.
/// A remainder is a second pass over every B panel (for an LM head, the
/// whole vocabulary's weights read again), and inside a block it splits the
/// fused epilogue and the cache-block loop in two. A shorter tile must keep:
///  - at least two thirds of the rows (6 -> 4): fewer raise the loads per
///    FMA too far;
///  - at least as many accumulators as FMAs in flight, or the FMA latency
///    shows.
/// AVX-512's 6 x 64 tile gives 4 x 64 (16 accumulators), 22% faster on
/// 512x2048x5632 than 6 rows and a 2-row remainder. (A 6 x 16 AVX2 tile gave
/// 4 x 16, 8 accumulators and no slack: alone that GEMM ran 5-9% faster in
/// 6-row tiles with the remainder, but the blocks lost 1-11%; AVX2's 4 x 24
/// now divides such an M and gives 3 x 24, 9 accumulators.)
static int64_t shortestRegisterRows(const CpuTarget &target,
                                    const ContractionTiling &tiling) {
  int64_t vectors =
      std::max<int64_t>(1, tiling.registerCols / std::max<int64_t>(
                                                     1, target.lanes()));
  int64_t rows = std::max((2 * tiling.registerRows + 2) / 3,
                          (kFmaInFlight + vectors - 1) / vectors);
  return std::min(rows, tiling.registerRows);
}

ContractionTiling mlir::tfm::deriveContractionTiling(const CpuTarget &target,
                                                     bool useAmx,
                                                     bool useBf16Dot) {
  const int64_t lanes = target.lanes();
  // Registers besides the tile's: without FMA each multiply-add is a
  // multiply into a scratch register and an add. (bf16/f16 GEMMs take the
  // same tiles: their A panels are packed in f32 and a B vector widens in
  // its own register.)
  const int64_t registers = target.vectorRegisters - (target.hasFMA ? 0 : 1);
  // Register tile rows x (vectors * lanes): rows * vectors accumulators, plus
  // `vectors` registers for the B row of one K step and one for the
  // broadcast A element must fit, or LLVM spills inside the K loop. Among the
  // tiles that fit, take the fewest loads per FMA: (rows + vectors) /
  // (rows * vectors); rows at most 8 (A is read as broadcasts). Three
  // vectors per row are split into one register each before LLVM sees them
  // (tfm-tile-and-vectorize-contractions): AVX2's 16 registers give 4 x 24,
  // twelve accumulators in tiles that divide M = 512, where 6 x 16 needed a
  // 4-row tile (eight accumulators, no slack over the FMA latency).
  int64_t bestRows = 1, bestVectors = 1;
  double bestCost = 1e9;
  for (int64_t vectors : {1, 2, 3, 4}) {
    int64_t rows = std::min<int64_t>(8, (registers - vectors - 1) / vectors);
    if (rows < 1)
      continue;
    double cost = double(rows + vectors) / double(rows * vectors);
    if (cost < bestCost - 1e-9) {
      bestCost = cost;
      bestRows = rows;
      bestVectors = vectors;
    }
  }
  ContractionTiling tiling;
  tiling.registerRows = bestRows;
  tiling.registerCols = bestVectors * lanes;
  tiling.minRegisterRows = shortestRegisterRows(target, tiling);
  // K slice: the B micro-panel (K x cols) and the A micro-panel (rows x K)
  // in three quarters of L1.
  int64_t depth = target.l1Bytes * 3 / 4 /
                  ((tiling.registerCols + tiling.registerRows) * 4);
  tiling.blockDepth = std::clamp<int64_t>(floorPowerOfTwo(std::max<int64_t>(
                                              depth, 1)),
                                          64, 512);
  // N block: the B block (K slice x N block) in half of L2.
  int64_t cols = target.l2Bytes / 2 / (tiling.blockDepth * 4);
  tiling.blockCols = std::clamp<int64_t>(
      cols / tiling.registerCols * tiling.registerCols, tiling.registerCols,
      1024);
  // M block: the A block in a quarter of L2.
  int64_t rows = target.l2Bytes / 4 / (tiling.blockDepth * 4);
  tiling.blockRows = std::clamp<int64_t>(
      rows / tiling.registerRows * tiling.registerRows, tiling.registerRows,
      256);
  // Dot products (decode): four outputs share each load of the activation
  // row; partial sums four vectors deep hide the FMA latency.
  tiling.dotCols = 4;
  tiling.dotDepth = std::max<int64_t>(32, 2 * lanes);
  // A one-row tile (decode's GEMV on packed weights) reads several panels
  // at once: one core reads a single sequential stream far below its
  // bandwidth. As many as keep the accumulators within half the registers,
  // at most 4. Measured on TinyLlama-shaped decode, one thread, Xeon VM:
  // bf16 212 -> 145 ms/token (AVX-512) and 205 -> 144 (AVX2 code, 4
  // panels of two vectors; 162 with 2); f32 264 -> 244 (AVX-512, 4; 8:
  // 241) and 291 -> 273 (AVX2 code, 2 panels of three vectors; 298 with
  // 4). AVX2 bf16 now has panels of three vectors too (2 of them; 4
  // measured no faster).
  int64_t panelVectors =
      std::max<int64_t>(1, tiling.registerCols / std::max<int64_t>(1, lanes));
  tiling.gemvPanels = 1;
  while (tiling.gemvPanels < 4 &&
         2 * tiling.gemvPanels * panelVectors <= target.vectorRegisters / 2)
    tiling.gemvPanels *= 2;
  if (useAmx && target.hasAmxBf16) {
    // One thread's converted B block (three bf16 parts of K block x 128
    // columns) in a quarter of L2, the K block at most 256 deep: C's tiles
    // are reloaded once per K block, and the K block's steps are unrolled
    // (8 steps of 32: deeper blocks gained little and doubled the kernels'
    // compile time).
    tiling.amxBlockCols = 128;
    int64_t amxDepth = target.l2Bytes / 4 / (3 * tiling.amxBlockCols * 2);
    tiling.amxBlockDepth =
        std::clamp<int64_t>(floorPowerOfTwo(std::max<int64_t>(amxDepth, 1)),
                            32, 256);
  }
  // bf16 GEMMs on AMX tiles where those are planned; elsewhere, with
  // AVX512-BF16, as pair dot products in the FMA path's register tiles.
  if (useBf16Dot && target.hasAvx512Bf16 && target.vectorBits == 512 &&
      tiling.amxBlockCols == 0)
    tiling.bf16Pairs = 1;
  return tiling;
}

llvm::ArrayRef<OptionGroupField<CpuTilingOverrides>>
CpuTilingOverrides::getFields() {
  using T = CpuTilingOverrides;
  static const OptionGroupField<T> fields[] = {
      {"register-rows", &T::registerRows, "rows (M) of the register tile"},
      {"min-register-rows", &T::minRegisterRows,
       "fewest rows of a shorter register tile taken for an M the planned "
       "rows do not divide, instead of a remainder tile"},
      {"register-cols", &T::registerCols,
       "columns (N, vector lanes) of the register tile, a power of two"},
      {"block-rows", &T::blockRows, "cache block rows (M)"},
      {"block-cols", &T::blockCols, "cache block columns (N)"},
      {"block-depth", &T::blockDepth, "cache block depth (K)"},
      {"dot-cols", &T::dotCols,
       "outputs (rows of an [out, in] weight) per tile of the dot-product "
       "form used for fewer than 16 rows"},
      {"dot-depth", &T::dotDepth,
       "vector width (K) of the dot-product partial sums"},
      {"gemv-panels", &T::gemvPanels,
       "panels of a packed weight a one-row register tile reads at once "
       "(decode's GEMVs)"},
      {"amx-block-cols", &T::amxBlockCols,
       "with amx: columns of B per block, a thread's unit of work"},
      {"amx-block-depth", &T::amxBlockDepth,
       "with amx: K per block, over which C's tiles stay in registers"},
  };
  return fields;
}

ContractionTiling mlir::tfm::withOverrides(const CpuTarget &target,
                                           ContractionTiling tiling,
                                           const CpuTilingOverrides &o) {
  auto pick = [](int64_t &field, int64_t override) {
    if (override > 0)
      field = override;
  };
  pick(tiling.registerRows, o.registerRows);
  pick(tiling.registerCols, o.registerCols);
  tiling.minRegisterRows = o.minRegisterRows > 0
                               ? std::min(o.minRegisterRows, tiling.registerRows)
                               : shortestRegisterRows(target, tiling);
  pick(tiling.blockRows, o.blockRows);
  pick(tiling.blockCols, o.blockCols);
  pick(tiling.blockDepth, o.blockDepth);
  pick(tiling.dotCols, o.dotCols);
  pick(tiling.dotDepth, o.dotDepth);
  pick(tiling.gemvPanels, o.gemvPanels);
  // AMX blocks only where the target plans tiles at all.
  if (tiling.amxBlockCols > 0) {
    pick(tiling.amxBlockCols, o.amxBlockCols);
    pick(tiling.amxBlockDepth, o.amxBlockDepth);
  }
  // bf16Pairs is the target's and the bf16-dot option's, never overridden.
  return tiling;
}
