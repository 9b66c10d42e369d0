//===- BlockMatmulAvx2.cpp - the quantized matmuls for Avx2 (8 lanes) ---===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernels themselves are BlockMatmul.h and
// Int8BlockMatmul.h. On f32 activations panels of 16 or 32 columns; on
// int8 activations 32 (the AVX2 plan's, and an AVX-512 VNNI plan's byte
// formats) and 64 (its Q4_0 and Q4_K), the VNNI plan's run on a CPU
// without VNNI.
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Int8BlockMatmul.h"
#include "Kernels.h"

using namespace tfm::kernels;

TFM_DEFINE_BLOCK_MATMULS(Avx2, 8, 2, 4)
TFM_DEFINE_INT8_BLOCK_MATMULS(Avx2, Avx2, 4, 8)
