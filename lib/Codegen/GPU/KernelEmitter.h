//===- KernelEmitter.h - MLIR text of the GPU kernels -----------*- C++ -*-===//
//
// The kernels of --tfm-gpu-flash-attention-kernels,
// --tfm-gpu-tensor-core-matmul, --tfm-gpu-warpgroup-matmul and
// --tfm-gpu-matvec are written as MLIR text and parsed. KernelEmitter writes
// that text: one op a line, regions opened and closed around their bodies,
// values under fresh SSA names (or given names where the text is easier to
// read with them). Private to lib/Codegen/GPU.
//
//===----------------------------------------------------------------------===//
#ifndef TFM_LIB_CODEGEN_GPU_KERNELEMITTER_H
#define TFM_LIB_CODEGEN_GPU_KERNELEMITTER_H

#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::tfm::gpu_kernels {

/// "affine.apply affine_map<()[s0, ...] -> (expr)>()[syms...]". The matmul
/// kernels do their index arithmetic in affine.apply:
/// convert-vector-to-gpu{use-nvgpu} rejects scalar arith.muli/addi next to
/// the contractions.
std::string apply(llvm::StringRef expr, llvm::ArrayRef<std::string> syms);

/// Writes the MLIR text of one kernel's host function.
class KernelEmitter {
public:
  KernelEmitter() = default;
  KernelEmitter(const KernelEmitter &) = delete;
  KernelEmitter &operator=(const KernelEmitter &) = delete;

  /// The text written so far.
  const std::string &str() const { return text; }

  /// A fresh SSA name, `%<hint><n>`. Fresh names end in a digit and names
  /// given to def() do not, so the two never meet.
  std::string fresh(llvm::StringRef hint = "v");
  /// Emits `%x = <rhs>` for a fresh %x and returns %x.
  std::string let(const std::string &rhs, llvm::StringRef hint = "v");
  /// Emits `%<name> = <rhs>` and returns %<name>.
  std::string def(llvm::StringRef name, const std::string &rhs);
  /// Emits `text` as one line.
  void line(const std::string &text);
  /// Emits `<header> {` and indents what follows until close().
  void open(const std::string &header);
  /// Emits the `}` of the innermost open().
  void close();

  /// `arith.constant <value> : index`.
  std::string index(int64_t value);
  /// `<op> a, b : <type>`.
  std::string bin(llvm::StringRef op, const std::string &a,
                  const std::string &b, llvm::StringRef type = "index");
  /// `affine.apply` of `expr` over the symbols `syms` (see apply()).
  std::string apply(llvm::StringRef expr, llvm::ArrayRef<std::string> syms,
                    llvm::StringRef hint = "v");
  /// A `type` (vector<NxMxT>) from N rows of vector<MxT>, by vector.insert
  /// into `zero` (n-D vector.from_elements and extract_strided_slice do not
  /// lower in the NVVM pipeline).
  std::string rows(const std::vector<std::string> &parts,
                   const std::string &rowType, const std::string &type,
                   std::string zero);

private:
  std::string text;
  llvm::raw_string_ostream os{text};
  std::string indent;
  int counter = 0;
};

} // namespace mlir::tfm::gpu_kernels

#endif // TFM_LIB_CODEGEN_GPU_KERNELEMITTER_H
