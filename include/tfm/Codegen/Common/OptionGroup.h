//===- OptionGroup.h - several named values given as one option -*- C++ -*-===//
//
// A pass or pipeline option whose value is a group of named fields,
// `name=value,name=value` (braces around it optional): the CPU tiling
// overrides and the pipelines' debug switches. A group is a plain copyable
// struct that lists its fields once (`getFields`); the same struct is the
// value of the pass option ODS generates, of the pipeline option that feeds
// it, and the source of both help texts, so that no field is declared
// twice. Give a group an llvm::cl parser by deriving the specialisation of
// llvm::cl::parser<Group> from OptionGroupParser<Group>.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_CODEGEN_COMMON_OPTIONGROUP_H
#define TFM_CODEGEN_COMMON_OPTIONGROUP_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace mlir::tfm {

/// One field of a group: its option name, where it lives, and its help.
template <typename Group> struct OptionGroupField {
  llvm::StringLiteral name;
  std::variant<int64_t Group::*, bool Group::*, std::string Group::*> member;
  llvm::StringLiteral help;
};

/// Comparison and printing for a group `Group` that derives from
/// OptionGroup<Group> and defines
/// `static llvm::ArrayRef<OptionGroupField<Group>> getFields()`.
template <typename Group> struct OptionGroup {
  /// Sets the fields `text` names ("name=value,..."; bools take 0/1 or
  /// true/false); the others keep their values. False, with `error` saying
  /// which field and why, on an unknown name or a malformed value.
  bool parse(llvm::StringRef text, std::string &error) {
    text = text.trim();
    if (text.consume_front("{") && !text.consume_back("}")) {
      error = "expected a closing '}'";
      return false;
    }
    llvm::SmallVector<llvm::StringRef> items;
    text.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (llvm::StringRef item : items) {
      auto [name, value] = item.trim().split('=');
      const OptionGroupField<Group> *field = find(name.trim());
      if (!field) {
        error = ("unknown field '" + name.trim() + "' (expected " +
                 getFieldNames() + ")")
                    .str();
        return false;
      }
      if (!set(*field, value.trim())) {
        error =
            ("field '" + field->name + "': bad value '" + value.trim() + "'")
                .str();
        return false;
      }
    }
    return true;
  }

  /// The fields that differ from a default-constructed group, in braces:
  /// a value `parse` reads back.
  void print(llvm::raw_ostream &os) const {
    Group defaults;
    os << "{";
    bool first = true;
    for (const OptionGroupField<Group> &field : Group::getFields()) {
      std::string value = get(field, self()), initial = get(field, defaults);
      if (value == initial)
        continue;
      os << (first ? "" : ",") << field.name << "=" << value;
      first = false;
    }
    os << "}";
  }

  /// "name: help; ..." for the option's description.
  static std::string describe() {
    std::string text;
    for (const OptionGroupField<Group> &field : Group::getFields())
      text += (text.empty() ? "" : "; ") + field.name.str() + ": " +
              field.help.str();
    return text;
  }

  friend bool operator==(const Group &a, const Group &b) {
    return llvm::all_of(Group::getFields(),
                        [&](const OptionGroupField<Group> &field) {
                          return get(field, a) == get(field, b);
                        });
  }
  friend bool operator!=(const Group &a, const Group &b) { return !(a == b); }
  friend llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                       const Group &group) {
    group.print(os);
    return os;
  }

private:
  const Group &self() const { return static_cast<const Group &>(*this); }

  static std::string getFieldNames() {
    return llvm::join(llvm::map_range(Group::getFields(),
                                      [](const OptionGroupField<Group> &f) {
                                        return f.name.str();
                                      }),
                      ", ");
  }
  static const OptionGroupField<Group> *find(llvm::StringRef name) {
    for (const OptionGroupField<Group> &field : Group::getFields())
      if (field.name == name)
        return &field;
    return nullptr;
  }
  static std::string get(const OptionGroupField<Group> &field,
                         const Group &group) {
    if (auto *member = std::get_if<int64_t Group::*>(&field.member))
      return std::to_string(group.**member);
    if (auto *member = std::get_if<bool Group::*>(&field.member))
      return group.**member ? "1" : "0";
    return group.*std::get<std::string Group::*>(field.member);
  }
  bool set(const OptionGroupField<Group> &field, llvm::StringRef value) {
    Group &group = static_cast<Group &>(*this);
    if (auto *member = std::get_if<int64_t Group::*>(&field.member))
      return !value.getAsInteger(10, group.**member);
    if (auto *member = std::get_if<bool Group::*>(&field.member)) {
      std::optional<bool> flag = llvm::StringSwitch<std::optional<bool>>(value)
                                     .Cases({"1", "true"}, true)
                                     .Cases({"0", "false"}, false)
                                     .Default(std::nullopt);
      if (flag)
        group.**member = *flag;
      return flag.has_value();
    }
    group.*std::get<std::string Group::*>(field.member) = value.str();
    return true;
  }
};

/// The llvm::cl parser of a group.
template <typename Group>
class OptionGroupParser : public llvm::cl::basic_parser<Group> {
public:
  using llvm::cl::basic_parser<Group>::basic_parser;

  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, Group &value) {
    std::string error;
    if (value.parse(arg, error))
      return false;
    return option.error(error, argName);
  }
  static void print(llvm::raw_ostream &os, const Group &value) {
    value.print(os);
  }
  llvm::StringRef getValueName() const override { return "name=value,..."; }
  /// For --print-options: the value, and the default where it differs.
  void printOptionDiff(const llvm::cl::Option &option, const Group &value,
                       const llvm::cl::OptionValue<Group> &defaultValue,
                       size_t globalWidth) const {
    this->printOptionName(option, globalWidth);
    llvm::outs() << "= " << value;
    if (defaultValue.hasValue() && defaultValue.getValue() != value)
      llvm::outs() << " (default: " << defaultValue.getValue() << ")";
    llvm::outs() << "\n";
  }
};

} // namespace mlir::tfm

#endif // TFM_CODEGEN_COMMON_OPTIONGROUP_H
