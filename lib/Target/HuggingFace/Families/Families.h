//===- Families.h - the table of model families tfm imports -----*- C++ -*-===//
//
// A family is what tfm knows of one `model_type` of config.json: how to read
// its config (defaults of its transformers config class, fields it refuses),
// how to build its model, and which tensors its checkpoints hold that are
// not parameters. Each lives in Families/<family>.cpp; Families.cpp lists
// them once, and every dispatch on the model type goes through that table.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TARGET_HUGGINGFACE_FAMILIES_FAMILIES_H
#define TFM_LIB_TARGET_HUGGINGFACE_FAMILIES_FAMILIES_H

#include "../ConfigReader.h"
#include "../EntryBuilder.h"

#include "tfm/Runtime/FusedExperts.h"

namespace mlir::tfm::hf {

struct FamilyInfo {
  ModelFamily family;
  /// config.json's `model_type`.
  llvm::StringLiteral modelType;
  /// Reads the family's fields; `c.family` and `c.modelType` are set.
  void (*readConfig)(FieldReader &r, ModelConfig &c);
  /// Builds an entry's body from the token ids to the logits.
  Value (EntryBuilder::*buildLogits)();
  /// One decoder layer: the hidden state after layer `layer`.
  Value (EntryBuilder::*block)(int64_t layer, Value h);
  /// Checkpoint tensors that are not parameters, beyond every family's (a
  /// tied `lm_head.weight` saved anyway, `*.rotary_emb.inv_freq`); null
  /// when there are none. `prefix` is the checkpoint's name prefix.
  bool (*isIgnoredTensor)(StringRef name, StringRef prefix,
                          const ModelConfig &c) = nullptr;
  /// A prefix some of the family's checkpoints put before every tensor name
  /// (GPT2LMHeadModel's "transformer."), recognised by `prefixProbe`
  /// standing under it rather than alone.
  llvm::StringLiteral wrapperPrefix = "";
  llvm::StringLiteral prefixProbe = "";
  /// How the family's checkpoints name each expert's tensors and the
  /// router (the importer's parameters, and the names transformers 5's
  /// fused tensors are read as); an empty module for a dense family.
  runtime::ExpertTensorNames experts = {};
};

/// Every family, in the order messages list them.
ArrayRef<FamilyInfo> getFamilies();
/// The family of `modelType`, or null when tfm does not import it.
const FamilyInfo *lookupFamily(StringRef modelType);
const FamilyInfo &getFamily(ModelFamily family);
/// "gpt2, llama, ... and opt", for messages.
std::string getImportedModelTypes();

//===--- Families/GPT2.cpp ------------------------------------------------===//
void readGPT2Config(FieldReader &r, ModelConfig &c);
bool isGPT2IgnoredTensor(StringRef name, StringRef prefix,
                         const ModelConfig &c);

//===--- Families/Llama.cpp -----------------------------------------------===//
/// Where a Llama-like config class defaults differently from LlamaConfig.
struct LlamaLikeDefaults {
  /// num_key_value_heads; 0: one per query head.
  int64_t kvHeads = 0;
  /// head_dim; 0: hidden_size / num_attention_heads (and a head_dim given
  /// in the file is then the one that must be even).
  int64_t headDim = 0;
  double normEps = 1e-6;
  double ropeTheta = 10000.0;
  /// The field of the expert count, for the top-k check; empty when dense.
  StringRef expertsKey;
};
/// The fields every Llama-like family reads alike, then `readExtras`, then
/// the head (and expert) checks.
void readLlamaLike(FieldReader &r, ModelConfig &c,
                   const LlamaLikeDefaults &defaults,
                   void (*readExtras)(FieldReader &, ModelConfig &));
void readLlamaConfig(FieldReader &r, ModelConfig &c);
void readMistralConfig(FieldReader &r, ModelConfig &c);
void readMixtralConfig(FieldReader &r, ModelConfig &c);

//===--- Families/Qwen.cpp ------------------------------------------------===//
void readQwen2Config(FieldReader &r, ModelConfig &c);
void readQwen3Config(FieldReader &r, ModelConfig &c);
void readQwen3MoEConfig(FieldReader &r, ModelConfig &c);

//===--- Families/Olmo2.cpp -----------------------------------------------===//
void readOlmo2Config(FieldReader &r, ModelConfig &c);

//===--- Families/Gemma.cpp -----------------------------------------------===//
void readGemmaConfig(FieldReader &r, ModelConfig &c);
void readGemma2Config(FieldReader &r, ModelConfig &c);
void readGemma3Config(FieldReader &r, ModelConfig &c);

//===--- Families/Phi3.cpp, GPTNeoX.cpp, OPT.cpp --------------------------===//
void readPhi3Config(FieldReader &r, ModelConfig &c);
void readGPTNeoXConfig(FieldReader &r, ModelConfig &c);
bool isGPTNeoXIgnoredTensor(StringRef name, StringRef prefix,
                            const ModelConfig &c);
void readOPTConfig(FieldReader &r, ModelConfig &c);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_TARGET_HUGGINGFACE_FAMILIES_FAMILIES_H
