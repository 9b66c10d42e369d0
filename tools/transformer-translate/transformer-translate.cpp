//===- transformer-translate.cpp - models into tfm ------------------------===//
//
// Translates model descriptions from other ecosystems into tfm modules:
//
//   transformer-translate (--import-hf MODEL_DIR | --import-hf-config
//   config.json)
//       [--batch B] [--seq-len S] [--kv-cache S_max]
//       [--per-sequence-positions] [--prefill-last-logits]
//       [--dtype f32|bf16|f16] [-o out.mlir]
//
// reads a Hugging Face config.json (gpt2, llama, mixtral, mistral, qwen2,
// qwen3, gemma, phi3, gpt_neox, opt), from a model directory as
// save_pretrained writes it or named alone, and prints the verified tfm
// module of the whole causal LM (see
// tfm/Target/HuggingFace/ImportModel.h for its entry points). Locations are
// printed, so op names such as loc("h.0.attn.c_attn") survive into
// transformer-opt and its ledger. A directory's checkpoint (model.safetensors
// or an index and its shards) is opened for its header only: parameters whose
// tensors are stored in another float type (bf16, f16) get `tfm.param_dtype`,
// so that the ledger counts the checkpoint's bytes.
//
//===----------------------------------------------------------------------===//
#include "tfm/Dialect/Tfm/IR/Tfm.h"
#include "tfm/Runtime/Limits.h"
#include "tfm/Runtime/ModelDirectory.h"
#include "tfm/Runtime/Checkpoint.h"
#include "tfm/Runtime/OutputFile.h"
#include "tfm/Target/HuggingFace/Checkpoint.h"
#include "tfm/Target/HuggingFace/ImportModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("transformer-translate options");

static cl::opt<std::string> importHFConfig(
    "import-hf-config",
    cl::desc("Import a Hugging Face config.json of a model type tfm knows "
             "(gpt2, llama, mistral, mixtral, qwen2/3, qwen3_moe, gemma 1-3, "
             "phi3, gpt_neox, olmo2, opt; '-' reads stdin)"),
    cl::value_desc("config.json"), cl::cat(category));
static cl::opt<std::string> importHF(
    "import-hf",
    cl::desc("Import a Hugging Face model directory as save_pretrained "
             "writes it (config.json, and model.safetensors or "
             "model.safetensors.index.json for the parameters' stored types), "
             "or a config.json"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<int64_t> batch("batch", cl::desc("Batch size B (default 1)"),
                              cl::init(1), cl::cat(category));
static cl::opt<int64_t>
    seqLen("seq-len",
           cl::desc("Sequence length S of @forward and @prefill (default: "
                    "128, or the model's context length if shorter)"),
           cl::init(0), cl::cat(category));
static cl::opt<int64_t>
    kvCache("kv-cache",
            cl::desc("Also emit @prefill and @decode over a KV cache of "
                     "S_max positions"),
            cl::value_desc("S_max"), cl::init(0), cl::cat(category));
static cl::opt<bool> perSequencePositions(
    "per-sequence-positions",
    cl::desc("With --kv-cache: @decode takes a position per sequence, "
             "%positions: tensor<Bxi64> (ragged batches), instead of one "
             "index"),
    cl::init(false), cl::cat(category));
static cl::opt<bool> prefillLastLogits(
    "prefill-last-logits",
    cl::desc("With --kv-cache: @prefill returns the logits of one position "
             "per sequence, [B, 1, V], chosen by %logit_positions: "
             "tensor<Bxi64> (what generation reads), instead of all S"),
    cl::init(false), cl::cat(category));
static cl::opt<std::string> computeDType(
    "dtype",
    cl::desc("Type of parameters, activations and KV caches: f32 (default), "
             "bf16 or f16; half-precision models accumulate in f32 and return "
             "f32 logits"),
    cl::value_desc("f32|bf16|f16"), cl::init("f32"), cl::cat(category));
static cl::opt<int64_t> blockLayer(
    "block",
    cl::desc("Emit only decoder layer LAYER, as a tfm.block function from "
             "the hidden state to the hidden state (for the ledger, or to "
             "study one layer's code)"),
    cl::value_desc("LAYER"), cl::init(-1), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("filename"),
                                       cl::init("-"), cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "transformer-translate: error: " << message << "\n";
  return 1;
}

/// A one-line summary of the model, printed above the module for readers.
static void printSummary(llvm::raw_ostream &os, llvm::StringRef fileName,
                         const tfm::hf::ModelConfig &c,
                         const tfm::hf::ImportOptions &options) {
  os << "// Imported by transformer-translate from " << fileName << ":\n"
     << "// " << c.modelType << ", " << c.numLayers << " layers, d=" << c.hiddenSize
     << ", " << c.numHeads << " query / " << c.numKVHeads
     << " key-value heads of " << c.headDim << ", MLP width "
     << c.intermediateSize;
  if (c.numExperts && c.sparseLayers.empty())
    os << " x " << c.numExperts << " experts (top " << c.numExpertsPerToken
       << ")";
  if (c.numExperts && !c.sparseLayers.empty())
    os << " (dense layers); " << c.numExperts << " experts of "
       << c.expertIntermediateSize << " (top " << c.numExpertsPerToken
       << (c.normalizeTopK ? ", renormalised" : "") << ") in "
       << llvm::count(c.sparseLayers, true) << " layers";
  os << ", vocab " << c.vocabSize << ", "
     << (c.tieWordEmbeddings ? "tied" : "untied") << " LM head\n"
     << "// B=" << options.batch << ", S=" << getSeqLen(c, options);
  if (options.kvCacheLength)
    os << ", KV cache of " << options.kvCacheLength << " positions";
  if (options.perSequencePositions)
    os << ", a decode position per sequence";
  if (options.computeType != tfm::runtime::DType::F32)
    os << ", computed in " << tfm::runtime::getDTypeName(options.computeType)
       << " (f32 logits)";
  if (options.block)
    os << ", decoder layer " << *options.block << " alone";
  os << "\n";
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "transformer-translate: models into tfm\n");
  if (!importHF.empty() && !importHFConfig.empty())
    return fail("--import-hf and --import-hf-config are mutually exclusive");
  if (importHF.empty() && importHFConfig.empty())
    return fail("nothing to translate: pass --import-hf-config config.json "
                "or --import-hf MODEL_DIR");
  // A model directory: its config.json, and its checkpoint if it has one.
  std::string configPath = importHFConfig, weightsPath;
  if (!importHF.empty()) {
    llvm::Expected<tfm::runtime::ModelFiles> files =
        tfm::runtime::findModelFiles(importHF);
    if (!files)
      return fail(llvm::toString(files.takeError()));
    configPath = files->configPath;
    weightsPath = files->weightsPath;
  }

  // Messages name the file as given ("<stdin>" for "-").
  std::string fileName =
      configPath == "-" ? std::string("<stdin>") : configPath;
  if (outputFile != "-") {
    if (llvm::Error err = tfm::runtime::checkOutputPath(outputFile, "-o"))
      return fail(llvm::toString(std::move(err)));
    if (tfm::runtime::isSameFile(outputFile, configPath))
      return fail("-o " + outputFile + ": is the input config; refusing to "
                  "overwrite an input");
  }
  // A named file must be a regular file of bounded size (not /dev/zero);
  // stdin is read as given.
  if (configPath != "-")
    if (llvm::Error err = tfm::runtime::checkInputFile(
            configPath, tfm::runtime::kMaxTextFileBytes))
      return fail(llvm::toString(std::move(err)));
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(configPath, /*IsText=*/true);
  if (!buffer)
    return fail(fileName + ": " + buffer.getError().message());

  llvm::Expected<tfm::hf::ModelConfig> config =
      tfm::hf::parseModelConfig((*buffer)->getBuffer());
  if (!config)
    return fail(fileName + ": " + llvm::toString(config.takeError()));
  for (const std::string &field : config->unknownFields)
    llvm::errs() << "transformer-translate: warning: " << fileName
                 << ": " << field
                 << ": unknown field, ignored; the model is built as if it "
                    "were absent\n";

  MLIRContext context;
  context.loadDialect<tfm::TfmDialect, func::FuncDialect>();
  tfm::hf::ImportOptions options;
  options.batch = batch;
  options.seqLen = seqLen;
  options.kvCacheLength = kvCache;
  options.perSequencePositions = perSequencePositions;
  options.prefillLastLogits = prefillLastLogits;
  if (blockLayer.getNumOccurrences())
    options.block = blockLayer;
  if (computeDType == "f32")
    options.computeType = tfm::runtime::DType::F32;
  else if (computeDType == "bf16")
    options.computeType = tfm::runtime::DType::BF16;
  else if (computeDType == "f16")
    options.computeType = tfm::runtime::DType::F16;
  else
    return fail("--dtype '" + computeDType + "': expected f32, bf16 or f16");
  if (perSequencePositions && !kvCache)
    return fail("--per-sequence-positions needs --kv-cache S_max: only "
                "@decode takes positions per sequence");
  if (prefillLastLogits && !kvCache)
    return fail("--prefill-last-logits needs --kv-cache S_max: only @prefill "
                "returns a position's logits");
  auto module = tfm::hf::importModel(context, *config, options);
  if (!module)
    return fail(llvm::toString(module.takeError()));
  if (!weightsPath.empty()) {
    auto checkpoint = tfm::runtime::Checkpoint::open({weightsPath});
    if (!checkpoint)
      return fail(llvm::toString(checkpoint.takeError()));
    if (llvm::Error err = tfm::hf::readFusedExperts(*config, **checkpoint))
      return fail(llvm::toString(std::move(err)));
    tfm::hf::annotateParamDTypes(
        **module, **checkpoint,
        tfm::hf::getCheckpointNamePrefix(*config, **checkpoint));
  }

  // Written whole or not at all (tfm/Runtime/OutputFile.h); "-" is stdout.
  auto print = [&](llvm::raw_ostream &os) {
    printSummary(os, fileName, *config, options);
    (*module)->print(os, OpPrintingFlags()
                             .enableDebugInfo(/*enable=*/true,
                                              /*prettyForm=*/false)
                             .useLocalScope()
                             .printNameLocAsPrefix());
    os << "\n";
  };
  if (outputFile == "-") {
    print(llvm::outs());
    return 0;
  }
  if (llvm::Error err = tfm::runtime::writeOutputFile(outputFile, print))
    return fail(llvm::toString(std::move(err)));
  return 0;
}
