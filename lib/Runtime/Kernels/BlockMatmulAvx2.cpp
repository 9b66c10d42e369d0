//===- BlockMatmulAvx2.cpp - the quantized matmuls for Avx2 (8 lanes) ---===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernels themselves are BlockMatmul.h. Panels of
// 16, 32 columns.
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Int8BlockMatmul.h"
#include "Kernels.h"

using namespace tfm::kernels;

TFM_DEFINE_BLOCK_MATMULS(Avx2, 8, 2, 4)
TFM_DEFINE_INT8_BLOCK_MATMULS(Avx2, Avx2, 2, 4)
