//===- Families.cpp - the table of model families tfm imports -------------===//
//
// The one list of the model types tfm imports. Adding a family: a
// Families/<family>.cpp with its config reader and builder, its line here,
// a ModelFamily enumerator, and tests under test/models/ against
// transformers (docs/design.md, "Model families").
//
//===----------------------------------------------------------------------===//
#include "Families.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tfm;
using namespace mlir::tfm::hf;

static const FamilyInfo kFamilies[] = {
    {ModelFamily::GPT2, "gpt2", readGPT2Config, &EntryBuilder::buildGPT2,
     &EntryBuilder::gpt2Block, isGPT2IgnoredTensor, "transformer.",
     "wte.weight"},
    {ModelFamily::Llama, "llama", readLlamaConfig, &EntryBuilder::buildLlama,
     &EntryBuilder::llamaBlock},
    {ModelFamily::Mixtral, "mixtral", readMixtralConfig,
     &EntryBuilder::buildLlama, &EntryBuilder::llamaBlock, nullptr, "", "",
     runtime::kMixtralExpertNames},
    {ModelFamily::Mistral, "mistral", readMistralConfig,
     &EntryBuilder::buildLlama, &EntryBuilder::llamaBlock},
    {ModelFamily::Qwen2, "qwen2", readQwen2Config, &EntryBuilder::buildLlama,
     &EntryBuilder::llamaBlock},
    {ModelFamily::Qwen3, "qwen3", readQwen3Config, &EntryBuilder::buildLlama,
     &EntryBuilder::llamaBlock},
    {ModelFamily::Qwen3MoE, "qwen3_moe", readQwen3MoEConfig,
     &EntryBuilder::buildLlama, &EntryBuilder::llamaBlock, nullptr, "", "",
     runtime::kQwenMoEExpertNames},
    {ModelFamily::Gemma, "gemma", readGemmaConfig, &EntryBuilder::buildGemma,
     &EntryBuilder::gemmaBlock},
    {ModelFamily::Gemma2, "gemma2", readGemma2Config,
     &EntryBuilder::buildGemma, &EntryBuilder::gemmaBlock},
    {ModelFamily::Gemma3, "gemma3_text", readGemma3Config,
     &EntryBuilder::buildGemma, &EntryBuilder::gemmaBlock},
    {ModelFamily::Phi3, "phi3", readPhi3Config, &EntryBuilder::buildPhi3,
     &EntryBuilder::phi3Block},
    {ModelFamily::GPTNeoX, "gpt_neox", readGPTNeoXConfig,
     &EntryBuilder::buildGPTNeoX, &EntryBuilder::gptNeoXBlock,
     isGPTNeoXIgnoredTensor},
    {ModelFamily::Olmo2, "olmo2", readOlmo2Config, &EntryBuilder::buildLlama,
     &EntryBuilder::olmo2Block},
    {ModelFamily::OPT, "opt", readOPTConfig, &EntryBuilder::buildOPT,
     &EntryBuilder::optBlock},
};

ArrayRef<FamilyInfo> mlir::tfm::hf::getFamilies() { return kFamilies; }

const FamilyInfo *mlir::tfm::hf::lookupFamily(StringRef modelType) {
  const FamilyInfo *it = llvm::find_if(
      kFamilies, [&](const FamilyInfo &f) { return f.modelType == modelType; });
  return it == std::end(kFamilies) ? nullptr : it;
}

const FamilyInfo &mlir::tfm::hf::getFamily(ModelFamily family) {
  const FamilyInfo *it = llvm::find_if(
      kFamilies, [&](const FamilyInfo &f) { return f.family == family; });
  assert(it != std::end(kFamilies) && "a ModelFamily without a table entry");
  return *it;
}

std::string mlir::tfm::hf::getImportedModelTypes() {
  std::string list;
  size_t n = std::size(kFamilies);
  for (size_t i = 0; i < n; ++i) {
    if (i)
      list += i + 1 == n ? " and " : ", ";
    list += kFamilies[i].modelType;
  }
  return list;
}
