// REQUIRES: mlir-runner
// RUN: transformer-opt %s --tfm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// The tile plans of an AVX2 and an AVX-512 target (4x24 and 6x64 register
// tiles; odd extents split into a bulk and remainder strips) on any host:
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=znver3" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="cpu=skylake-avx512" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="tiling=register-rows=6,register-cols=16,block-rows=12,block-cols=48,block-depth=7" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s

// Projections large enough to take every path of the tiled, vectorised
// contraction code (several cache blocks in M, N and K, register tiles, B
// transposed for out_in weights, extents with no good divisor) against a
// scalar reference in the same module. The reference multiplies as
// acc - (-x) * w, a body the contraction code generator does not match, so it
// stays a scalar loop nest. @check prints [mismatches, max abs error].

// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK-NOT: data =

#id2 = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j, k) -> (i, k)>
#wio = affine_map<(i, j, k) -> (k, j)>
#woi = affine_map<(i, j, k) -> (j, k)>
#y = affine_map<(i, j, k) -> (i, j)>
module {
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

  func.func @in_out(%x: tensor<1x130x400xf32>, %w: tensor<400x200xf32>, %b: tensor<200xf32>) -> tensor<1x130x200xf32> {
    %y = tfm.linear %x, %w, %b : (tensor<1x130x400xf32>, tensor<400x200xf32>, tensor<200xf32>) -> tensor<1x130x200xf32>
    return %y : tensor<1x130x200xf32>
  }
  func.func @out_in(%x: tensor<1x67x96xf32>, %w: tensor<83x96xf32>) -> tensor<1x67x83xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x67x96xf32>, tensor<83x96xf32>) -> tensor<1x67x83xf32>
    return %y : tensor<1x67x83xf32>
  }
  func.func @decode_out_in(%x: tensor<1x1x256xf32>, %w: tensor<320x256xf32>) -> tensor<1x1x320xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x256xf32>, tensor<320x256xf32>) -> tensor<1x1x320xf32>
    return %y : tensor<1x1x320xf32>
  }

  // Prints [number of elements off by more than 1e-4 + 1e-4 |ref|, max abs error].
  func.func private @check(%y: tensor<?x?xf32>, %ref: tensor<?x?xf32>) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %bad0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %r:2 = linalg.generic {indexing_maps = [#id2, #id2, affine_map<(i, j) -> ()>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%y, %ref : tensor<?x?xf32>, tensor<?x?xf32>) outs(%bad0, %bad0 : tensor<f32>, tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %bad: f32, %mx: f32):
      %d = arith.subf %a, %b : f32
      %ad = math.absf %d : f32
      %ab = math.absf %b : f32
      %tol = arith.constant 1.0e-4 : f32
      %rt = arith.mulf %tol, %ab : f32
      %lim = arith.addf %tol, %rt : f32
      %ok = arith.cmpf ole, %ad, %lim : f32
      %one = arith.constant 1.0 : f32
      %inc = arith.select %ok, %z, %one : f32
      %nb = arith.addf %bad, %inc : f32
      %nm = arith.maximumf %mx, %ad : f32
      linalg.yield %nb, %nm : f32, f32
    } -> (tensor<f32>, tensor<f32>)
    %nbad = tensor.extract %r#0[] : tensor<f32>
    %nmax = tensor.extract %r#1[] : tensor<f32>
    %out = tensor.from_elements %nbad, %nmax : tensor<2xf32>
    %buf = bufferization.to_buffer %out : tensor<2xf32> to memref<2xf32>
    %u = memref.cast %buf : memref<2xf32> to memref<*xf32>
    call @printMemrefF32(%u) : (memref<*xf32>) -> ()
    return
  }

  func.func @main() {
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %c5 = arith.constant 5 : index
    %c7 = arith.constant 7 : index
    %c101 = arith.constant 101 : index
    %f101 = arith.constant 101.0 : f32
    %half = arith.constant 0.5 : f32
    %zero = arith.constant 0.0 : f32

    // in_out with bias: several cache blocks in M, N and K.
    %e1 = tensor.empty() : tensor<130x400xf32>
    %p2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e1 : tensor<130x400xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c3 : index
      %bj = arith.muli %j, %c7 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<130x400xf32>
    %e3 = tensor.empty() : tensor<400x200xf32>
    %p4 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e3 : tensor<400x200xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c5 : index
      %bj = arith.muli %j, %c3 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<400x200xf32>
    %x35 = tensor.expand_shape %p2 [[0, 1], [2]] output_shape [1, 130, 400] : tensor<130x400xf32> into tensor<1x130x400xf32>
    %e6 = tensor.empty() : tensor<1x200xf32>
    %p7 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e6 : tensor<1x200xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c3 : index
      %bj = arith.muli %j, %c7 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<1x200xf32>
    %b8 = tensor.collapse_shape %p7 [[0, 1]] : tensor<1x200xf32> into tensor<200xf32>
    %e9 = tensor.empty() : tensor<130x200xf32>
    %init10 = linalg.broadcast ins(%b8 : tensor<200xf32>) outs(%e9 : tensor<130x200xf32>) dimensions = [0]
    %y311 = call @in_out(%x35, %p4, %b8) : (tensor<1x130x400xf32>, tensor<400x200xf32>, tensor<200xf32>) -> tensor<1x130x200xf32>
    %y12 = tensor.collapse_shape %y311 [[0, 1], [2]] : tensor<1x130x200xf32> into tensor<130x200xf32>
    %ref13 = linalg.generic {indexing_maps = [#x, #wio, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p2, %p4 : tensor<130x400xf32>, tensor<400x200xf32>) outs(%init10 : tensor<130x200xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<130x200xf32>
    %yd14 = tensor.cast %y12 : tensor<130x200xf32> to tensor<?x?xf32>
    %rd15 = tensor.cast %ref13 : tensor<130x200xf32> to tensor<?x?xf32>
    call @check(%yd14, %rd15) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // out_in, prime extents (67 rows, 83 outputs).
    %e16 = tensor.empty() : tensor<67x96xf32>
    %p17 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e16 : tensor<67x96xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c7 : index
      %bj = arith.muli %j, %c1 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<67x96xf32>
    %e18 = tensor.empty() : tensor<83x96xf32>
    %p19 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e18 : tensor<83x96xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c1 : index
      %bj = arith.muli %j, %c5 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<83x96xf32>
    %x320 = tensor.expand_shape %p17 [[0, 1], [2]] output_shape [1, 67, 96] : tensor<67x96xf32> into tensor<1x67x96xf32>
    %e21 = tensor.empty() : tensor<67x83xf32>
    %z22 = linalg.fill ins(%zero : f32) outs(%e21 : tensor<67x83xf32>) -> tensor<67x83xf32>
    %y323 = call @out_in(%x320, %p19) : (tensor<1x67x96xf32>, tensor<83x96xf32>) -> tensor<1x67x83xf32>
    %y24 = tensor.collapse_shape %y323 [[0, 1], [2]] : tensor<1x67x83xf32> into tensor<67x83xf32>
    %ref25 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p17, %p19 : tensor<67x96xf32>, tensor<83x96xf32>) outs(%z22 : tensor<67x83xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<67x83xf32>
    %yd26 = tensor.cast %y24 : tensor<67x83xf32> to tensor<?x?xf32>
    %rd27 = tensor.cast %ref25 : tensor<67x83xf32> to tensor<?x?xf32>
    call @check(%yd26, %rd27) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Decode: one row against an out_in weight.
    %e28 = tensor.empty() : tensor<1x256xf32>
    %p29 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e28 : tensor<1x256xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c3 : index
      %bj = arith.muli %j, %c5 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<1x256xf32>
    %e30 = tensor.empty() : tensor<320x256xf32>
    %p31 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%e30 : tensor<320x256xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c7 : index
      %bj = arith.muli %j, %c3 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<320x256xf32>
    %x332 = tensor.expand_shape %p29 [[0, 1], [2]] output_shape [1, 1, 256] : tensor<1x256xf32> into tensor<1x1x256xf32>
    %e33 = tensor.empty() : tensor<1x320xf32>
    %z34 = linalg.fill ins(%zero : f32) outs(%e33 : tensor<1x320xf32>) -> tensor<1x320xf32>
    %y335 = call @decode_out_in(%x332, %p31) : (tensor<1x1x256xf32>, tensor<320x256xf32>) -> tensor<1x1x320xf32>
    %y36 = tensor.collapse_shape %y335 [[0, 1], [2]] : tensor<1x1x320xf32> into tensor<1x320xf32>
    %ref37 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%p29, %p31 : tensor<1x256xf32>, tensor<320x256xf32>) outs(%z34 : tensor<1x320xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<1x320xf32>
    %yd38 = tensor.cast %y36 : tensor<1x320xf32> to tensor<?x?xf32>
    %rd39 = tensor.cast %ref37 : tensor<1x320xf32> to tensor<?x?xf32>
    call @check(%yd38, %rd39) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()
    return
  }
}
