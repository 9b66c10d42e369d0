//===- BlockMatmulSse2.cpp - the quantized matmuls for Sse2 (4 lanes) ---===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernels themselves are BlockMatmul.h. Panels of
// 8, 16, 32 columns.
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Int8BlockMatmul.h"
#include "Kernels.h"

using namespace tfm::kernels;

TFM_DEFINE_BLOCK_MATMULS(Sse2, 4, 2, 4, 8)
TFM_DEFINE_INT8_BLOCK_MATMULS(Sse2, void)
