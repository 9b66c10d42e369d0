//===- KernelEmitter.cpp - MLIR text of the GPU kernels -------------------===//
#include "KernelEmitter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cassert>

using namespace mlir;
using namespace mlir::tfm::gpu_kernels;

std::string mlir::tfm::gpu_kernels::apply(llvm::StringRef expr,
                                          llvm::ArrayRef<std::string> syms) {
  std::string symbols, operands;
  for (size_t i = 0; i < syms.size(); ++i) {
    symbols += (i ? ", s" : "s") + std::to_string(i);
    operands += (i ? ", " : "") + syms[i];
  }
  return llvm::formatv("affine.apply affine_map<()[{0}] -> ({1})>()[{2}]",
                       symbols, expr, operands)
      .str();
}

std::string KernelEmitter::fresh(llvm::StringRef hint) {
  return llvm::formatv("%{0}{1}", hint, counter++).str();
}

std::string KernelEmitter::let(const std::string &rhs, llvm::StringRef hint) {
  std::string name = fresh(hint);
  line(name + " = " + rhs);
  return name;
}

std::string KernelEmitter::def(llvm::StringRef name, const std::string &rhs) {
  assert(!name.empty() && !llvm::isDigit(name.back()) &&
         "a given name ending in a digit could be a fresh name");
  std::string value = ("%" + name).str();
  line(value + " = " + rhs);
  return value;
}

void KernelEmitter::line(const std::string &text) {
  os << indent << text << "\n";
}

void KernelEmitter::open(const std::string &header) {
  line(header + " {");
  indent += "  ";
}

void KernelEmitter::close() {
  assert(indent.size() >= 2 && "close() without open()");
  indent.resize(indent.size() - 2);
  line("}");
}

std::string KernelEmitter::index(int64_t value) {
  return let(llvm::formatv("arith.constant {0} : index", value), "c");
}

std::string KernelEmitter::bin(llvm::StringRef op, const std::string &a,
                               const std::string &b, llvm::StringRef type) {
  return let(llvm::formatv("{0} {1}, {2} : {3}", op, a, b, type));
}

std::string KernelEmitter::apply(llvm::StringRef expr,
                                 llvm::ArrayRef<std::string> syms,
                                 llvm::StringRef hint) {
  return let(gpu_kernels::apply(expr, syms), hint);
}

std::string KernelEmitter::rows(const std::vector<std::string> &parts,
                                const std::string &rowType,
                                const std::string &type, std::string zero) {
  for (size_t i = 0; i < parts.size(); ++i)
    zero = let(llvm::formatv("vector.insert {0}, {1} [{2}] : {3} into {4}",
                             parts[i], zero, i, rowType, type));
  return zero;
}
