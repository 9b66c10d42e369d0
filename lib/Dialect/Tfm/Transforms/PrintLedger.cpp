//===- PrintLedger.cpp - the model ledger ---------------------------------===//
//
// Prints the accounting of Ledger.h for every function holding tfm ops, as an
// aligned text table (numbers with thousands separators) or as JSON (plain
// integers) for scripts. Output goes to stdout; the IR is not changed.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Dialect/Tfm/Transforms/Ledger.h"
#include "tfm/Dialect/Tfm/Transforms/Passes.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>

namespace mlir::tfm {
#define GEN_PASS_DEF_TFMPRINTLEDGER
#include "tfm/Dialect/Tfm/Transforms/Passes.h.inc"
} // namespace mlir::tfm

using namespace mlir;
using namespace mlir::tfm;

/// 1771776 -> "1,771,776".
static std::string withSeparators(int64_t value) {
  // The magnitude as unsigned: -INT64_MIN does not fit int64.
  uint64_t magnitude = value < 0 ? 0 - uint64_t(value) : uint64_t(value);
  std::string digits = std::to_string(magnitude);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

/// "768x2304" for a shape, "scalar" for rank 0.
static std::string shapeString(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleave(shape, os, "x");
  return out;
}

/// "2x8x768 f32" per result, comma separated.
static std::string outputString(Operation *op) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::interleaveComma(op->getResultTypes(), os, [&](Type type) {
    if (auto tensor = dyn_cast<RankedTensorType>(type))
      os << shapeString(tensor.getShape()) << ' ' << tensor.getElementType();
    else
      os << type;
  });
  return out;
}

/// "1024x4096 (in 4096 -> out 1024)": the stored shape, then the projection
/// it implements, since `out_in` weights read backwards.
static std::string weightString(const LedgerWeight &weight) {
  std::string out = shapeString(weight.type.getShape());
  if (weight.inOut)
    out += " (in " + std::to_string(weight.inOut->first) + " -> out " +
           std::to_string(weight.inOut->second) + ")";
  return out;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

/// The ledger counts in int64: a tensor of more than 2^40 elements (4 TiB of
/// f32, beyond any real model) could make its parameter, FLOP or byte counts
/// wrap around, and a wrapped count (0 for tensor<2^32x2^32xf32>) looks like
/// a real one. Such a module is refused, naming the value.
static constexpr uint64_t kMaxLedgerElements = uint64_t(1) << 40;

static LogicalResult checkCountable(Operation *root) {
  auto tooLarge = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return false;
    uint64_t n = 1;
    for (int64_t d : tensor.getShape()) {
      bool overflow = false;
      n = llvm::SaturatingMultiply<uint64_t>(n, uint64_t(d), &overflow);
      if (overflow || n > kMaxLedgerElements)
        return true;
    }
    return false;
  };
  WalkResult result = root->walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (tooLarge(v.getType())) {
        op->emitError() << "tfm-print-ledger: " << v.getType()
                        << " has more than 2^40 elements, the ledger's limit "
                           "(its counts would overflow)";
        return WalkResult::interrupt();
      }
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (tooLarge(arg.getType())) {
            op->emitError() << "tfm-print-ledger: argument #"
                            << arg.getArgNumber() << " of type "
                            << arg.getType()
                            << " has more than 2^40 elements, the ledger's "
                               "limit (its counts would overflow)";
            return WalkResult::interrupt();
          }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {
/// A table whose columns are as wide as their widest cell; the first
/// `textColumns` columns are left-aligned, numbers right-aligned.
struct Table {
  unsigned textColumns;
  SmallVector<std::string> header;
  SmallVector<SmallVector<std::string>> rows;
  /// Lines printed under a row, outside the column grid.
  SmallVector<SmallVector<std::string>> notes;

  void addRow(SmallVector<std::string> cells,
              SmallVector<std::string> rowNotes = {}) {
    rows.push_back(std::move(cells));
    notes.push_back(std::move(rowNotes));
  }

  void print(raw_ostream &os) const {
    SmallVector<size_t> widths(header.size(), 0);
    auto widen = [&](ArrayRef<std::string> cells) {
      for (auto [i, cell] : llvm::enumerate(cells))
        widths[i] = std::max(widths[i], cell.size());
    };
    widen(header);
    for (const auto &row : rows)
      widen(row);
    auto printCells = [&](ArrayRef<std::string> cells) {
      for (auto [i, cell] : llvm::enumerate(cells)) {
        if (i)
          os << "  ";
        if (i < textColumns)
          os << cell << std::string(widths[i] - cell.size(), ' ');
        else
          os << std::string(widths[i] - cell.size(), ' ') << cell;
      }
      os << '\n';
    };
    printCells(header);
    for (auto [row, rowNotes] : llvm::zip(rows, notes)) {
      printCells(row);
      for (const std::string &note : rowNotes)
        os << "    " << note << '\n';
    }
  }
};
} // namespace

static SmallVector<std::string> totalsCells(StringRef name,
                                            const LedgerTotals &t) {
  return {name.str(),
          withSeparators(t.ops),
          withSeparators(t.params),
          withSeparators(t.flops),
          withSeparators(t.weightBytes),
          withSeparators(t.activationBytes),
          withSeparators(t.kvCacheBytesPerToken)};
}

static void printText(raw_ostream &os, FunctionOpInterface fn,
                      const FunctionLedger &ledger,
                      const LedgerOptions &options) {
  os << "tfm ledger for @" << fn.getName();
  if (fn->hasAttr(kBlockAttrName))
    os << " (" << kBlockAttrName << ")";
  os << "\n\n";

  Table ops{4,
            {"label", "op", "category", "output", "params", "FLOPs",
             "weight bytes", "activation bytes", "KV bytes/token"},
            {},
            {}};
  for (const LedgerRow &row : ledger.rows) {
    SmallVector<std::string> weights;
    for (const LedgerWeight &weight : row.weights)
      weights.push_back("param " + weight.name.str() + ": " +
                        weightString(weight));
    if (row.scratch)
      weights.push_back(
          "scratch: naive " + withSeparators(row.scratch->naiveBytes) +
          " bytes (f32 scores + probabilities, S x S_kv each), flash " +
          withSeparators(row.scratch->flashBytes) + " bytes (" +
          std::to_string(options.flashQueryTile) + "x" +
          std::to_string(options.flashKeyTile) + " tiles)");
    ops.addRow({row.label, row.op->getName().getStringRef().str(),
                stringifyLedgerCategory(row.category).str(),
                outputString(row.op), withSeparators(row.params),
                withSeparators(row.flops), withSeparators(row.weightBytes),
                withSeparators(row.activationBytes),
                withSeparators(row.kvCacheBytesPerToken)},
               std::move(weights));
  }
  ops.print(os);

  os << "\ntotals:\n";
  Table totals{1,
               {"category", "ops", "params", "FLOPs", "weight bytes",
                "activation bytes", "KV bytes/token"},
               {},
               {}};
  for (unsigned c = 0; c < kNumLedgerCategories; ++c)
    if (ledger.byCategory[c].ops)
      totals.addRow(totalsCells(
          stringifyLedgerCategory(LedgerCategory(c)), ledger.byCategory[c]));
  totals.addRow(totalsCells("function", ledger.total));
  totals.print(os);

  os << "\nparameters: " << withSeparators(ledger.total.params) << " ("
     << withSeparators(ledger.total.weightBytes) << " bytes)\n";
  os << "activation bytes: " << withSeparators(ledger.total.activationBytes)
     << " (sum of all tfm op results); peak live "
     << withSeparators(ledger.peakLiveActivationBytes)
     << " (results alive at once, returned ones excluded)\n";
  os << "KV cache: " << withSeparators(ledger.total.kvCacheBytesPerToken)
     << " bytes per token per sequence\n";
  if (std::optional<int64_t> ranks = getTensorParallelRanks(fn))
    os << "tensor parallel: " << *ranks
       << " ranks; the counts above are one rank's; each rank sends "
       << withSeparators(ledger.total.communicationBytes) << " bytes in "
       << ledger.total.collectives << " all-reduces ("
       << withSeparators(ledger.total.communicationBytesPerToken)
       << " bytes per token)\n";
  if (ledger.peakScratch.naiveBytes)
    os << "attention peak scratch: naive "
       << withSeparators(ledger.peakScratch.naiveBytes)
       << " bytes, flash " << withSeparators(ledger.peakScratch.flashBytes)
       << " bytes (--tfm-flash-attention with " << options.flashQueryTile
       << "x" << options.flashKeyTile << " tiles)\n";
  constexpr int64_t kSaturated = std::numeric_limits<int64_t>::max();
  const LedgerTotals &t = ledger.total;
  if (llvm::is_contained({t.params, t.flops, t.weightBytes, t.activationBytes,
                          t.kvCacheBytesPerToken,
                          ledger.peakLiveActivationBytes,
                          ledger.peakScratch.naiveBytes,
                          ledger.peakScratch.flashBytes},
                         kSaturated))
    os << "note: counts shown as " << withSeparators(kSaturated)
       << " (the int64 maximum) are at least that: the true counts do not "
          "fit\n";
  for (const LedgerSharedParam &shared : ledger.shared) {
    os << "note: parameter " << shared.weight.name << " ("
       << withSeparators(shared.weight.type.getNumElements())
       << " params) is shared (tied) by ";
    llvm::interleave(
        shared.users, os,
        [&](unsigned user) { os << "'" << ledger.rows[user].label << "'"; },
        " and ");
    os << "; counted once in the totals, under "
       << stringifyLedgerCategory(ledger.rows[shared.users.front()].category)
       << "\n";
  }
  os << "\n";
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static void writeTotals(llvm::json::OStream &json, const LedgerTotals &t) {
  json.attribute("ops", t.ops);
  json.attribute("params", t.params);
  json.attribute("flops", t.flops);
  json.attribute("weight_bytes", t.weightBytes);
  json.attribute("activation_bytes", t.activationBytes);
  json.attribute("kv_cache_bytes_per_token", t.kvCacheBytesPerToken);
  json.attribute("communication_bytes", t.communicationBytes);
  json.attribute("communication_bytes_per_token",
                 t.communicationBytesPerToken);
}

static void writeShape(llvm::json::OStream &json, ArrayRef<int64_t> shape) {
  json.attributeArray("shape", [&] {
    for (int64_t dim : shape)
      json.value(dim);
  });
}

static void printJson(llvm::json::OStream &json, FunctionOpInterface fn,
                      const FunctionLedger &ledger) {
  auto writeScratch = [&](const AttentionScratch &scratch) {
    json.attribute("scratch_naive_bytes", scratch.naiveBytes);
    json.attribute("scratch_flash_bytes", scratch.flashBytes);
  };
  json.object([&] {
    json.attribute("function", fn.getName());
    json.attribute("block", fn->hasAttr(kBlockAttrName));
    json.attributeArray("ops", [&] {
      for (const LedgerRow &row : ledger.rows) {
        json.object([&] {
          json.attribute("label", row.label);
          json.attribute("op", row.op->getName().getStringRef());
          json.attribute("category", stringifyLedgerCategory(row.category));
          json.attributeArray("outputs", [&] {
            for (Type type : row.op->getResultTypes()) {
              auto tensor = dyn_cast<RankedTensorType>(type);
              if (!tensor)
                continue;
              json.object([&] {
                writeShape(json, tensor.getShape());
                std::string element;
                llvm::raw_string_ostream(element) << tensor.getElementType();
                json.attribute("element_type", element);
              });
            }
          });
          json.attribute("params", row.params);
          json.attributeArray("weights", [&] {
            for (const LedgerWeight &weight : row.weights) {
              json.object([&] {
                json.attribute("name", weight.name);
                writeShape(json, weight.type.getShape());
                json.attribute("params", weight.type.getNumElements());
                if (weight.inOut) {
                  json.attribute("in", weight.inOut->first);
                  json.attribute("out", weight.inOut->second);
                }
              });
            }
          });
          json.attribute("flops", row.flops);
          json.attribute("weight_bytes", row.weightBytes);
          json.attribute("activation_bytes", row.activationBytes);
          json.attribute("kv_cache_bytes_per_token", row.kvCacheBytesPerToken);
          if (row.scratch)
            writeScratch(*row.scratch);
        });
      }
    });
    json.attributeObject("attention_peak_scratch",
                         [&] { writeScratch(ledger.peakScratch); });
    json.attribute("peak_live_activation_bytes",
                   ledger.peakLiveActivationBytes);
    json.attributeObject("totals", [&] {
      writeTotals(json, ledger.total);
      json.attributeObject("categories", [&] {
        for (unsigned c = 0; c < kNumLedgerCategories; ++c)
          if (ledger.byCategory[c].ops)
            json.attributeObject(
                stringifyLedgerCategory(LedgerCategory(c)),
                [&] { writeTotals(json, ledger.byCategory[c]); });
      });
    });
    json.attributeArray("shared_params", [&] {
      for (const LedgerSharedParam &shared : ledger.shared) {
        json.object([&] {
          json.attribute("name", shared.weight.name);
          json.attribute("params", shared.weight.type.getNumElements());
          json.attributeArray("users", [&] {
            for (unsigned user : shared.users)
              json.value(ledger.rows[user].label);
          });
          json.attribute("counted_under",
                         stringifyLedgerCategory(
                             ledger.rows[shared.users.front()].category));
        });
      }
    });
  });
}

void mlir::tfm::printLedgerJson(raw_ostream &os, Operation *module,
                                const LedgerOptions &options) {
  SmallVector<FunctionOpInterface> functions;
  module->walk([&](FunctionOpInterface fn) { functions.push_back(fn); });
  // One JSON document for the whole module: an array with one object per
  // function, so that the output parses as is.
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.array([&] {
    for (FunctionOpInterface fn : functions) {
      FunctionLedger ledger = computeLedger(fn, options);
      if (!ledger.rows.empty())
        printJson(json, fn, ledger);
    }
  });
  os << "\n";
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct PrintLedgerPass : public tfm::impl::TfmPrintLedgerBase<PrintLedgerPass> {
  using TfmPrintLedgerBase::TfmPrintLedgerBase;

  void runOnOperation() override {
    if (format != "text" && format != "json") {
      getOperation().emitError()
          << "tfm-print-ledger: unknown format '" << format
          << "' (expected 'text' or 'json')";
      return signalPassFailure();
    }

    if (flashQueryTile < 1 || flashKeyTile < 1) {
      getOperation().emitError() << "tfm-print-ledger: tile sizes must be "
                                    "positive";
      return signalPassFailure();
    }
    LedgerOptions options{flashQueryTile, flashKeyTile};
    if (failed(checkCountable(getOperation())))
      return signalPassFailure();

    SmallVector<FunctionOpInterface> functions;
    getOperation().walk(
        [&](FunctionOpInterface fn) { functions.push_back(fn); });

    raw_ostream &os = llvm::outs();
    if (format == "text") {
      for (FunctionOpInterface fn : functions) {
        FunctionLedger ledger = computeLedger(fn, options);
        if (!ledger.rows.empty())
          printText(os, fn, ledger, options);
      }
    } else {
      printLedgerJson(os, getOperation(), options);
    }
    os.flush();
    markAllAnalysesPreserved();
  }
};
} // namespace
