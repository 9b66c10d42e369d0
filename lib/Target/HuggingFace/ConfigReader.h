//===- ConfigReader.h - reading the fields of a config.json -----*- C++ -*-===//
//
// What the families' config readers (Families/) share: FieldReader, which
// reads the fields of config.json's top-level object with the checks and
// messages every family gives, and the readers of fields several families
// have alike (sizes, activation, RoPE, head checks).
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_TARGET_HUGGINGFACE_CONFIGREADER_H
#define TFM_LIB_TARGET_HUGGINGFACE_CONFIGREADER_H

#include "tfm/Target/HuggingFace/ModelConfig.h"
#include "tfm/Runtime/Json.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <optional>
#include <string>
#include <vector>

namespace mlir::tfm::hf {

using llvm::ArrayRef;
using llvm::StringRef;
using llvm::Twine;
namespace json = llvm::json;

/// Sizes become tensor dimensions whose products (V*d, B*S*V, ...) must stay
/// far from int64 overflow.
inline constexpr int64_t kMaxSize = (int64_t(1) << 31) - 1;
/// Layers and experts each become IR and compiled code: the largest
/// published models have ~130 layers and 256 experts, and a hostile count
/// (num_hidden_layers: 100000) would build IR for minutes before any other
/// check.
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxExperts = 1024;

/// "a string", "an array", ... for messages about composite values; scalars
/// are quoted as written.
std::string describe(const json::Value &value);

/// Reads fields of the top-level object, remembering which it understood and
/// the first error. Reading goes on after an error (returning defaults) so
/// that callers stay linear; only the first error is reported.
class FieldReader {
public:
  explicit FieldReader(const json::Object &object) : object(object) {}

  /// The value of `key`, or null when it is absent or JSON `null` (which
  /// transformers reads as "use the default" as well).
  const json::Value *lookup(StringRef key) {
    understood.insert(key);
    const json::Value *value = object.get(key);
    return value && value->kind() != json::Value::Null ? value : nullptr;
  }

  /// Whether `key` is present with the value JSON `null` (where absent and
  /// null differ: a class default that null turns off).
  bool isNull(StringRef key) {
    understood.insert(key);
    const json::Value *value = object.get(key);
    return value && value->kind() == json::Value::Null;
  }

  void fail(StringRef key, const Twine &what) {
    if (error.empty())
      error = (key + ": " + what).str();
  }
  bool failed() const { return !error.empty(); }
  const std::string &getError() const { return error; }

  /// A size: a positive integer; missing is an error.
  int64_t requiredSize(StringRef key, StringRef modelType) {
    const json::Value *value = lookup(key);
    if (!value) {
      fail(key, "missing; a " + modelType + " config must give it");
      return 1;
    }
    return toSize(key, *value).value_or(1);
  }

  /// A size with a default, for fields transformers defaults too.
  int64_t sizeOr(StringRef key, int64_t defaultValue) {
    const json::Value *value = lookup(key);
    return value ? toSize(key, *value).value_or(defaultValue) : defaultValue;
  }

  /// A finite number in [0, below) (epsilons: below 1, or every output is
  /// the bias); `positive` excludes 0 (RoPE theta). JSON numbers beyond the
  /// double range (1e400) parse as infinity.
  double numberOr(StringRef key, double defaultValue, bool positive = false,
                  double below = HUGE_VAL) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue;
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0 ||
        (positive && *number == 0) || *number >= below) {
      std::string bound;
      if (std::isfinite(below))
        bound = llvm::formatv(" below {0}", llvm::format("%g", below)).str();
      fail(key, Twine("expected a finite ") +
                    (positive ? "positive" : "non-negative") + " number" +
                    bound + ", got " + describe(*value));
      return defaultValue;
    }
    return *number;
  }

  /// A size that also becomes a count of IR blocks: at most `limit`.
  int64_t requiredCount(StringRef key, StringRef modelType, int64_t limit) {
    int64_t n = requiredSize(key, modelType);
    if (n > limit) {
      fail(key, llvm::formatv("{0} exceeds tfm's limit of {1}", n, limit));
      return 1;
    }
    return n;
  }

  bool boolOr(StringRef key, bool defaultValue) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue;
    std::optional<bool> flag = value->getAsBoolean();
    if (!flag) {
      fail(key, "expected true or false, got " + describe(*value));
      return defaultValue;
    }
    return *flag;
  }

  std::string stringOr(StringRef key, StringRef defaultValue) {
    const json::Value *value = lookup(key);
    if (!value)
      return defaultValue.str();
    std::optional<StringRef> text = value->getAsString();
    if (!text) {
      fail(key, "expected a string, got " + describe(*value));
      return defaultValue.str();
    }
    return text->str();
  }

  /// A flag tfm cannot honour when true: `true` is an error saying `why`.
  void rejectTrue(StringRef key, const Twine &why) {
    if (boolOr(key, false))
      fail(key, "true is not supported: " + why);
  }

  /// A field tfm cannot honour unless it is absent or null.
  void rejectNonNull(StringRef key, const Twine &why) {
    if (const json::Value *value = lookup(key))
      fail(key, describe(*value) + " is not supported: " + why);
  }

  /// Fails on the first (sorted) field of kMathFields that the family's
  /// reader did not read and that is set to something other than null or
  /// false.
  void rejectUnreadMathFields(StringRef modelType);


  /// Fields present in the file that nothing read and that are not known to
  /// be neutral, sorted (json::Object is unordered).
  std::vector<std::string> getUnknownFields() const;


private:
  std::optional<int64_t> toSize(StringRef key, const json::Value &value) {
    std::optional<int64_t> size = mlir::tfm::runtime::getJsonInteger(value);
    if (!size || *size < 1 || *size > kMaxSize) {
      fail(key, "expected a positive integer below 2^31, got " +
                    describe(value));
      return std::nullopt;
    }
    return size;
  }

  const json::Object &object;
  llvm::StringSet<> understood;
  std::string error;
};

/// A family's activation field: `known` maps each accepted name to tfm's
/// activation; any other name is an error listing `supported`.
void readActivation(FieldReader &r, ModelConfig &c, StringRef key,
                    StringRef defaultName,
                    ArrayRef<std::pair<StringRef, Activation>> known,
                    const Twine &supported);

/// The sizes every family but GPT-2 reads under the same names (OPT names
/// its MLP width `ffn_dim`); missing ones are errors naming `type`.
void readDecoderSizes(FieldReader &r, ModelConfig &c, StringRef type,
                      StringRef intermediateKey = "intermediate_size");

/// RoPE settings: `rope_theta` and `rope_scaling` (transformers 4.x) or
/// `rope_parameters` (5.x), read alike; a scaling tfm does not implement is
/// an error. A `partial_rotary_factor` there must be 1.
void readRoPE(FieldReader &r, ModelConfig &c, double defaultTheta);

/// Reads one RoPE object (`rope_scaling`, `rope_parameters`, or a nested
/// one of Gemma 3's) named `field` in messages into `c`: its scaling and,
/// `withTheta`, its `rope_theta`. Returns the object's
/// `partial_rotary_factor` if it gives one, for the family to check.
std::optional<double> readRoPEObject(FieldReader &r, StringRef field,
                                     const json::Object &object,
                                     ModelConfig &c, bool withTheta);

/// For families that build unscaled RoPE: any scaling is an error naming
/// `type`.
void rejectRoPEScaling(FieldReader &r, StringRef type);

/// The shared checks of a rotary model's head sizes; `hint` ends the message
/// of heads that do not divide hidden_size.
void checkHeads(FieldReader &r, ModelConfig &c, bool explicitHeadDim,
                StringRef hint = "");

/// RoPE rotates pairs of elements, so the head size must be even; `key` is
/// the field the head size comes from. Does nothing after an earlier error.
void checkEvenRoPEHead(FieldReader &r, const ModelConfig &c, StringRef key);

} // namespace mlir::tfm::hf

#endif // TFM_LIB_TARGET_HUGGINGFACE_CONFIGREADER_H
