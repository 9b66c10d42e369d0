//===- tfm-sample.cpp - drive the sampler on logits from a file -----------===//
//
//   tfm-sample LOGITS.npy [--seen SEEN.npy] [--do-sample] [--temperature T]
//       [--top-k K] [--top-p P] [--repetition-penalty R] [--seed S]
//       [--draws N] [--processed OUT.npy]
//
// LOGITS is f32 [R, V]; SEEN (int64/int32 [R, L]) the tokens each row has
// seen, for the repetition penalty. Prints `ids:` and N rounds of one token
// per row, all drawn by one Sampler (tfm/Runtime/Sampler.h) in row order, and
// writes the logits after the processors (steps 1-4) to OUT.npy. Tests
// compare both with Python references.
//
//===----------------------------------------------------------------------===//
#include "tfm/Runtime/Npy.h"
#include "tfm/Runtime/Sampler.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace mlir::tfm::runtime;
namespace cl = llvm::cl;

static cl::opt<std::string> logitsFile(cl::Positional, cl::Required,
                                       cl::desc("<logits.npy>"));
static cl::opt<std::string> seenFile("seen", cl::value_desc("seen.npy"),
                                     cl::desc("Tokens seen per row"));
static cl::opt<bool> doSample("do-sample", cl::desc("Sample (else greedy)"));
static cl::opt<float> temperature("temperature", cl::init(1.0f));
static cl::opt<int64_t> topK("top-k", cl::init(50));
static cl::opt<float> topP("top-p", cl::init(1.0f));
static cl::opt<float> repetitionPenalty("repetition-penalty", cl::init(1.0f));
static cl::opt<uint64_t> seed("seed", cl::init(0));
static cl::opt<unsigned> draws("draws", cl::init(1));
static cl::opt<std::string> processedFile("processed",
                                          cl::value_desc("out.npy"));

[[noreturn]] static void fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "tfm-sample") << message << "\n";
  std::exit(1);
}

template <typename T> static T check(llvm::Expected<T> value) {
  if (!value)
    fail(llvm::toString(value.takeError()));
  return std::move(*value);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "tfm-sample: run the sampler\n");
  SamplingOptions options;
  options.doSample = doSample;
  options.temperature = temperature;
  options.topK = topK;
  options.topP = topP;
  options.repetitionPenalty = repetitionPenalty;
  options.seed = seed;
  if (llvm::Error err = verifySamplingOptions(options))
    fail(llvm::toString(std::move(err)));

  NpyArray logits = check(readNpy(logitsFile));
  if (logits.dtype != DType::F32 || logits.shape.size() != 2 ||
      logits.shape[1] < 1)
    fail(logitsFile + ": expected f32 logits [R, V]");
  int64_t rows = logits.shape[0], vocab = logits.shape[1];
  std::vector<float> values(rows * vocab);
  std::memcpy(values.data(), logits.data, values.size() * sizeof(float));

  std::vector<std::vector<int64_t>> seen(rows);
  if (!seenFile.empty()) {
    NpyArray array = check(readNpy(seenFile));
    if ((array.dtype != DType::I64 && array.dtype != DType::I32) ||
        array.shape.size() != 2 || array.shape[0] != rows)
      fail(llvm::formatv("{0}: expected int64 or int32 [{1}, L]", seenFile,
                         rows));
    std::vector<int64_t> ids(array.getNumElements());
    convertElements(array.data, array.dtype, ids.data(), DType::I64,
                    ids.size());
    for (int64_t r = 0; r < rows; ++r) {
      seen[r].assign(ids.begin() + r * array.shape[1],
                     ids.begin() + (r + 1) * array.shape[1]);
      for (int64_t id : seen[r])
        if (id < 0 || id >= vocab)
          fail(llvm::formatv("{0}: token {1} outside [0, {2})", seenFile, id,
                             vocab));
    }
  }

  Sampler sampler(options);
  llvm::outs() << "ids:";
  for (unsigned d = 0; d < draws; ++d)
    for (int64_t r = 0; r < rows; ++r)
      llvm::outs() << " "
                   << sampler.next(
                          llvm::ArrayRef(values).slice(r * vocab, vocab),
                          seen[r]);
  llvm::outs() << "\n";

  if (!processedFile.empty()) {
    for (int64_t r = 0; r < rows; ++r)
      processLogits(llvm::MutableArrayRef(values).slice(r * vocab, vocab),
                    seen[r], options);
    if (llvm::Error err =
            writeNpy(processedFile, DType::F32, {rows, vocab}, values.data()))
      fail(llvm::toString(std::move(err)));
  }
  return 0;
}
