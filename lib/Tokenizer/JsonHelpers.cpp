//===- JsonHelpers.cpp - reading tokenizer.json fields with paths ---------===//
#include "Components.h"
#include "tfm/Runtime/Json.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir::tfm::tokenizer;
namespace json = llvm::json;


llvm::Expected<const json::Object *>
mlir::tfm::tokenizer::getObject(const json::Value &value,
                                const llvm::Twine &path) {
  if (const json::Object *object = value.getAsObject())
    return object;
  return makeError(path + ": expected an object");
}

llvm::Expected<TypedObject>
mlir::tfm::tokenizer::getTypedObject(const json::Value &value,
                                     const llvm::Twine &path) {
  auto object = getObject(value, path);
  if (!object)
    return object.takeError();
  auto type = getString(**object, "type", path);
  if (!type)
    return type.takeError();
  return TypedObject{*object, std::move(*type)};
}

llvm::Expected<std::string>
mlir::tfm::tokenizer::getString(const json::Object &object, llvm::StringRef key,
                                const llvm::Twine &path,
                                std::optional<llvm::StringRef> fallback) {
  const json::Value *value = object.get(key);
  if ((!value || value->kind() == json::Value::Null) && fallback)
    return fallback->str();
  if (!value)
    return makeError(path + ": missing \"" + key + "\"");
  if (std::optional<llvm::StringRef> s = value->getAsString())
    return s->str();
  return makeError(path + "." + key + ": expected a string");
}

llvm::Expected<bool> mlir::tfm::tokenizer::getBool(const json::Object &object,
                                                   llvm::StringRef key,
                                                   const llvm::Twine &path,
                                                   bool fallback) {
  const json::Value *value = object.get(key);
  if (!value || value->kind() == json::Value::Null)
    return fallback;
  if (std::optional<bool> b = value->getAsBoolean())
    return *b;
  return makeError(path + "." + key + ": expected true or false");
}

llvm::Expected<int64_t>
mlir::tfm::tokenizer::getIndex(const json::Object &object, llvm::StringRef key,
                               const llvm::Twine &path) {
  const json::Value *value = object.get(key);
  if (!value)
    return makeError(path + ": missing \"" + key + "\"");
  std::optional<int64_t> i = mlir::tfm::runtime::getJsonInteger(*value);
  if (!i || *i < 0)
    return makeError(path + "." + key + ": expected a non-negative integer");
  return *i;
}

llvm::Expected<const json::Array *>
mlir::tfm::tokenizer::getArray(const json::Object &object, llvm::StringRef key,
                               const llvm::Twine &path) {
  const json::Value *value = object.get(key);
  if (!value)
    return makeError(path + ": missing \"" + key + "\"");
  if (const json::Array *array = value->getAsArray())
    return array;
  return makeError(path + "." + key + ": expected an array");
}

llvm::Expected<Pattern>
mlir::tfm::tokenizer::getPattern(const json::Object &object,
                                 const llvm::Twine &path) {
  const json::Value *value = object.get("pattern");
  const json::Object *pattern = value ? value->getAsObject() : nullptr;
  if (!pattern || pattern->size() != 1)
    return makeError(path + ".pattern: expected {\"String\": ...} or "
                            "{\"Regex\": ...}");
  if (std::optional<llvm::StringRef> s = pattern->getString("String"))
    return Pattern{s->str(), /*isRegex=*/false};
  if (std::optional<llvm::StringRef> s = pattern->getString("Regex"))
    return Pattern{s->str(), /*isRegex=*/true};
  return makeError(path + ".pattern: expected {\"String\": ...} or "
                          "{\"Regex\": ...}");
}

std::string mlir::tfm::tokenizer::replaceAll(llvm::StringRef s,
                                             llvm::StringRef from,
                                             llvm::StringRef to) {
  if (from.empty())
    return s.str();
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t next = s.find(from, pos);
    out.append(s.data() + pos,
               (next == llvm::StringRef::npos ? s.size() : next) - pos);
    if (next == llvm::StringRef::npos)
      return out;
    out += to;
    pos = next + from.size();
  }
}
