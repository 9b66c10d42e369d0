//===- BlockMatmulAvx512.cpp - the quantized matmuls for AVX-512 --------===//
//
// Compiled with this instruction set's flags (lib/Runtime/Kernels/
// CMakeLists.txt); the kernels themselves are BlockMatmul.h and
// Int8BlockMatmul.h. Panels of 32 columns, and 64 for
// Q4_0 and Q4_K on int8 activations.
//
//===----------------------------------------------------------------------===//
#include "BlockMatmul.h"
#include "Int8BlockMatmul.h"
#include "Kernels.h"

using namespace tfm::kernels;

TFM_DEFINE_BLOCK_MATMULS(Avx512, 16, 2)
TFM_DEFINE_INT8_BLOCK_MATMULS(Avx512, Avx512Vnni, 2, 4)
