//===- GgufModel.h - a GGUF file as a Hugging Face model ---------*- C++ -*-===//
//
// A GGUF file (tfm/Runtime/Gguf.h) holds a whole model: llama.cpp's
// architecture name and hyperparameters as metadata, and tensors under
// llama.cpp's names. tfm reads it as the Hugging Face model it was converted
// from (llama.cpp's convert_hf_to_gguf.py, run backwards): the metadata
// becomes the text of that model's config.json, which the importer reads
// as any other, and the tensors keep their stored types (F32, F16, BF16,
// and the blocks of Q8_0, Q4_0, Q4_K, Q5_K and Q6_K) under the checkpoint
// names the importer binds, with what the converter changed marked to be
// undone by whoever reads them (the rows of Llama's Q and K projections,
// permuted for ggml's RoPE: TensorView::interleavedHeads; Gemma's norms,
// stored plus one: TensorView::storedPlusOne).
//
// Architectures: `llama` (Llama, Mistral, TinyLlama...), `qwen2`, `qwen3`,
// `phi3`, `gemma`.
// Anything a file sets that tfm would not build as written (another
// architecture, partial rotary dims, a sliding window, RoPE factors stored
// as tensors) is refused naming the key or tensor.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_RUNTIME_GGUFMODEL_H
#define TFM_RUNTIME_GGUFMODEL_H

#include "tfm/Runtime/TensorFile.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace mlir::tfm::runtime {

class GgufFile;

/// Whether `path` names a GGUF file (by its `.gguf` suffix, as llama.cpp's
/// tools name them).
bool isGgufPath(llvm::StringRef path);

/// The config.json text of the model in `file`.
llvm::Expected<std::string> getGgufConfigJson(const GgufFile &file);
/// Opens `path` and returns getGgufConfigJson of it.
llvm::Expected<std::string> readGgufConfigJson(llvm::StringRef path);

/// The tensors of the GGUF file `path` under their Hugging Face names.
llvm::Expected<std::unique_ptr<TensorFile>>
openGgufTensors(llvm::StringRef path);
/// The same for a file already parsed (which the result then owns).
llvm::Expected<std::unique_ptr<TensorFile>>
makeGgufTensors(std::unique_ptr<GgufFile> file);

} // namespace mlir::tfm::runtime

#endif // TFM_RUNTIME_GGUFMODEL_H
