// RUN: transformer-opt %s --split-input-file --tfm-approximate-math | FileCheck %s

// Upstream's polynomials are written with math.fma. For a target without
// FMA (tfm.cpu_target fma = false: cpu=x86-64, sandybridge) LLVM would keep
// each one exact as a libm `fmaf` call per lane; there it becomes a
// multiply and an add.
// CHECK-LABEL: func.func @without_fma
// CHECK-NOT: math.fma
// CHECK-NOT: math.exp
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: math.fma
// CHECK: return
module attributes {tfm.cpu_target = {cpu = "x86-64", fma = false, vector_bits = 128 : i64, vector_registers = 16 : i64}} {
  func.func @without_fma(%x: vector<4xf32>) -> vector<4xf32> {
    %y = math.exp %x : vector<4xf32>
    return %y : vector<4xf32>
  }
}

// -----

// With FMA, or without a plan (the host's code), the fused form stays.
// CHECK-LABEL: func.func @with_fma
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK-LABEL: func.func @unplanned
// CHECK: math.fma
module attributes {tfm.cpu_target = {cpu = "znver3", fma = true, vector_bits = 256 : i64, vector_registers = 16 : i64}} {
  func.func @with_fma(%x: vector<8xf32>) -> vector<8xf32> {
    %y = math.exp %x : vector<8xf32>
    return %y : vector<8xf32>
  }
}

// -----

module {
  func.func @unplanned(%x: vector<8xf32>) -> vector<8xf32> {
    %y = math.exp %x : vector<8xf32>
    return %y : vector<8xf32>
  }
}
