// REQUIRES: mlir-runner
// RUN: transformer-opt %s --tfm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline=cpu=x86-64 | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s

// The inline polynomial approximations tfm-approximate-math puts in place of
// libm (tanh for GELU's tanh form, erf for its exact form, exp for softmax
// and SiLU) against libm itself, called directly, on a dense grid of
// 200,001 points. @sweep prints the number of points whose error exceeds
// the bound documented in lib/Codegen/CPU/ApproximateMath.cpp, and the largest
// error seen (for the record):
//   tanh on [-10, 10]: absolute error <= 1e-6
//   erf on [-6, 6]: absolute error <= 1e-6
//   exp on [-87, 88]: relative error <= 1e-6
// and that vector code gets the same values as scalar code. The second run
// plans for a CPU without FMA (cpu=x86-64), where the polynomials' fused
// multiply-adds are a multiply and an add: the same bounds hold.

// CHECK: tanh over-bound: 0
// CHECK: erf over-bound: 0
// CHECK: exp over-bound: 0
// CHECK: vector-scalar mismatches: 0

module {
  func.func private @tanhf(f32) -> f32
  func.func private @erff(f32) -> f32
  func.func private @expf(f32) -> f32
  func.func private @printF32(f32)
  func.func private @printI64(i64)
  func.func private @printNewline()
  func.func private @printString(!llvm.ptr)

  llvm.mlir.global internal constant @tanh_msg("tanh over-bound: \00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @erf_msg("erf over-bound: \00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @exp_msg("exp over-bound: \00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @vec_msg("vector-scalar mismatches: \00") {addr_space = 0 : i32}
  llvm.mlir.global internal constant @max_msg(" max error \00") {addr_space = 0 : i32}

  // kind 0: tanh, 1: erf, 2: exp (relative error). Returns (count, max).
  func.func @sweep(%kind: index, %lo: f32, %hi: f32, %bound: f32) -> (i64, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %n = arith.constant 200001 : index
    %nf = arith.constant 200000.0 : f32
    %zero = arith.constant 0.0 : f32
    %zi = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %tiny = arith.constant 1.0e-30 : f32
    %span = arith.subf %hi, %lo : f32
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%count = %zi, %max = %zero) -> (i64, f32) {
      %ii = arith.index_cast %i : index to i64
      %if = arith.sitofp %ii : i64 to f32
      %t = arith.divf %if, %nf : f32
      %off = arith.mulf %t, %span : f32
      %x = arith.addf %lo, %off : f32
      %err = scf.index_switch %kind -> f32
      case 0 {
        %a = math.tanh %x : f32
        %b = func.call @tanhf(%x) : (f32) -> f32
        %d = arith.subf %a, %b : f32
        %e = math.absf %d : f32
        scf.yield %e : f32
      }
      case 1 {
        %a = math.erf %x : f32
        %b = func.call @erff(%x) : (f32) -> f32
        %d = arith.subf %a, %b : f32
        %e = math.absf %d : f32
        scf.yield %e : f32
      }
      default {
        %a = math.exp %x : f32
        %b = func.call @expf(%x) : (f32) -> f32
        %d = arith.subf %a, %b : f32
        %e = math.absf %d : f32
        %bb = math.absf %b : f32
        %den = arith.maximumf %bb, %tiny : f32
        %rel = arith.divf %e, %den : f32
        scf.yield %rel : f32
      }
      %over = arith.cmpf ugt, %err, %bound : f32
      %inc = arith.select %over, %one, %zi : i64
      %count2 = arith.addi %count, %inc : i64
      %max2 = arith.maximumf %max, %err : f32
      scf.yield %count2, %max2 : i64, f32
    }
    return %r#0, %r#1 : i64, f32
  }

  func.func @report(%msg: !llvm.ptr, %count: i64, %max: f32) {
    func.call @printString(%msg) : (!llvm.ptr) -> ()
    func.call @printI64(%count) : (i64) -> ()
    %m = llvm.mlir.addressof @max_msg : !llvm.ptr
    func.call @printString(%m) : (!llvm.ptr) -> ()
    func.call @printF32(%max) : (f32) -> ()
    func.call @printNewline() : () -> ()
    return
  }

  // The same approximations on vector<8xf32> against their scalar form.
  func.func @vector_vs_scalar() -> i64 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %n = arith.constant 1000 : index
    %zi = arith.constant 0 : i64
    %one = arith.constant 1 : i64
    %scale = arith.constant 0.0137 : f32
    %base = arith.constant -6.0 : f32
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%count = %zi) -> i64 {
      %ii = arith.index_cast %i : index to i64
      %if = arith.sitofp %ii : i64 to f32
      %s = arith.mulf %if, %scale : f32
      %x = arith.addf %base, %s : f32
      %xs = vector.broadcast %x : f32 to vector<8xf32>
      %tv = math.tanh %xs : vector<8xf32>
      %ev = math.exp %xs : vector<8xf32>
      %fv = math.erf %xs : vector<8xf32>
      %t0 = vector.extract %tv[3] : f32 from vector<8xf32>
      %e0 = vector.extract %ev[5] : f32 from vector<8xf32>
      %f0 = vector.extract %fv[7] : f32 from vector<8xf32>
      %ts = math.tanh %x : f32
      %es = math.exp %x : f32
      %fs = math.erf %x : f32
      %a = arith.cmpf une, %t0, %ts : f32
      %b = arith.cmpf une, %e0, %es : f32
      %c = arith.cmpf une, %f0, %fs : f32
      %ab = arith.ori %a, %b : i1
      %abc = arith.ori %ab, %c : i1
      %inc = arith.select %abc, %one, %zi : i64
      %count2 = arith.addi %count, %inc : i64
      scf.yield %count2 : i64
    }
    return %r : i64
  }

  func.func @main() {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %abs = arith.constant 1.0e-6 : f32
    %m10 = arith.constant -10.0 : f32
    %p10 = arith.constant 10.0 : f32
    %m6 = arith.constant -6.0 : f32
    %p6 = arith.constant 6.0 : f32
    %m87 = arith.constant -87.0 : f32
    %p88 = arith.constant 88.0 : f32
    %t:2 = func.call @sweep(%c0, %m10, %p10, %abs) : (index, f32, f32, f32) -> (i64, f32)
    %tm = llvm.mlir.addressof @tanh_msg : !llvm.ptr
    func.call @report(%tm, %t#0, %t#1) : (!llvm.ptr, i64, f32) -> ()
    %e:2 = func.call @sweep(%c1, %m6, %p6, %abs) : (index, f32, f32, f32) -> (i64, f32)
    %em = llvm.mlir.addressof @erf_msg : !llvm.ptr
    func.call @report(%em, %e#0, %e#1) : (!llvm.ptr, i64, f32) -> ()
    %x:2 = func.call @sweep(%c2, %m87, %p88, %abs) : (index, f32, f32, f32) -> (i64, f32)
    %xm = llvm.mlir.addressof @exp_msg : !llvm.ptr
    func.call @report(%xm, %x#0, %x#1) : (!llvm.ptr, i64, f32) -> ()
    %v = func.call @vector_vs_scalar() : () -> i64
    %vm = llvm.mlir.addressof @vec_msg : !llvm.ptr
    func.call @printString(%vm) : (!llvm.ptr) -> ()
    func.call @printI64(%v) : (i64) -> ()
    func.call @printNewline() : () -> ()
    return
  }
}
