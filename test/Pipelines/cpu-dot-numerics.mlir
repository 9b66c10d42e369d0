// REQUIRES: mlir-runner
// RUN: transformer-opt %s --tfm-cpu-pipeline | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="tiling=dot-cols=3,dot-depth=8" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s
// RUN: transformer-opt %s --tfm-cpu-pipeline="tiling=dot-cols=1,dot-depth=64" | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils,%libomp | FileCheck %s

// Few-row (decode) projections against out_in weights [N, K]: the
// dot-product form of the contraction code generator (partial sums along K,
// K remainders split off with narrower vectors, the last few elements
// scalar), for K = 768, 100 (= 64 + 32 + 4), 37 (= 32 + 4 + 1), 3 (all
// scalar) and 1, odd N, 1 to 3 rows, with and without bias, against a scalar
// reference (acc - (-x) * w, not matched as a contraction). @check prints
// [mismatches, max abs error] per case.
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK: data =
// CHECK-NEXT: [0,
// CHECK-NOT: data =

#id2 = affine_map<(i, j) -> (i, j)>
#x = affine_map<(i, j, k) -> (i, k)>
#woi = affine_map<(i, j, k) -> (j, k)>
#y = affine_map<(i, j, k) -> (i, j)>
module {
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

  func.func @case0(%x: tensor<1x1x768xf32>, %w: tensor<9x768xf32>) -> tensor<1x1x9xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x768xf32>, tensor<9x768xf32>) -> tensor<1x1x9xf32>
    return %y : tensor<1x1x9xf32>
  }

  func.func @case1(%x: tensor<1x3x768xf32>, %w: tensor<7x768xf32>) -> tensor<1x3x7xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x3x768xf32>, tensor<7x768xf32>) -> tensor<1x3x7xf32>
    return %y : tensor<1x3x7xf32>
  }

  func.func @case2(%x: tensor<1x1x100xf32>, %w: tensor<13x100xf32>, %b: tensor<13xf32>) -> tensor<1x1x13xf32> {
    %y = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>} : (tensor<1x1x100xf32>, tensor<13x100xf32>, tensor<13xf32>) -> tensor<1x1x13xf32>
    return %y : tensor<1x1x13xf32>
  }

  func.func @case3(%x: tensor<1x3x100xf32>, %w: tensor<5x100xf32>) -> tensor<1x3x5xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x3x100xf32>, tensor<5x100xf32>) -> tensor<1x3x5xf32>
    return %y : tensor<1x3x5xf32>
  }

  func.func @case4(%x: tensor<1x1x37xf32>, %w: tensor<11x37xf32>) -> tensor<1x1x11xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x37xf32>, tensor<11x37xf32>) -> tensor<1x1x11xf32>
    return %y : tensor<1x1x11xf32>
  }

  func.func @case5(%x: tensor<1x3x37xf32>, %w: tensor<9x37xf32>, %b: tensor<9xf32>) -> tensor<1x3x9xf32> {
    %y = tfm.linear %x, %w, %b {layout = #tfm.layout<out_in>} : (tensor<1x3x37xf32>, tensor<9x37xf32>, tensor<9xf32>) -> tensor<1x3x9xf32>
    return %y : tensor<1x3x9xf32>
  }

  func.func @case6(%x: tensor<1x2x3xf32>, %w: tensor<5x3xf32>) -> tensor<1x2x5xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x2x3xf32>, tensor<5x3xf32>) -> tensor<1x2x5xf32>
    return %y : tensor<1x2x5xf32>
  }

  func.func @case7(%x: tensor<1x1x1xf32>, %w: tensor<4x1xf32>) -> tensor<1x1x4xf32> {
    %y = tfm.linear %x, %w {layout = #tfm.layout<out_in>} : (tensor<1x1x1xf32>, tensor<4x1xf32>) -> tensor<1x1x4xf32>
    return %y : tensor<1x1x4xf32>
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

    // Case 0: 1 x 768 x 9.
    %x0e = tensor.empty() : tensor<1x768xf32>
    %x0 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x0e : tensor<1x768xf32>) {
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
    } -> tensor<1x768xf32>
    %x30 = tensor.expand_shape %x0 [[0, 1], [2]] output_shape [1, 1, 768] : tensor<1x768xf32> into tensor<1x1x768xf32>
    %w0e = tensor.empty() : tensor<9x768xf32>
    %w0 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w0e : tensor<9x768xf32>) {
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
    } -> tensor<9x768xf32>
    %ie0 = tensor.empty() : tensor<1x9xf32>
    %init0 = linalg.fill ins(%zero : f32) outs(%ie0 : tensor<1x9xf32>) -> tensor<1x9xf32>
    %y30 = call @case0(%x30, %w0) : (tensor<1x1x768xf32>, tensor<9x768xf32>) -> tensor<1x1x9xf32>
    %y0 = tensor.collapse_shape %y30 [[0, 1], [2]] : tensor<1x1x9xf32> into tensor<1x9xf32>
    %yd0 = tensor.cast %y0 : tensor<1x9xf32> to tensor<?x?xf32>
    %ref0 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x0, %w0 : tensor<1x768xf32>, tensor<9x768xf32>) outs(%init0 : tensor<1x9xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<1x9xf32>
    %rd0 = tensor.cast %ref0 : tensor<1x9xf32> to tensor<?x?xf32>
    call @check(%yd0, %rd0) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 1: 3 x 768 x 7.
    %x1e = tensor.empty() : tensor<3x768xf32>
    %x1 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x1e : tensor<3x768xf32>) {
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
    } -> tensor<3x768xf32>
    %x31 = tensor.expand_shape %x1 [[0, 1], [2]] output_shape [1, 3, 768] : tensor<3x768xf32> into tensor<1x3x768xf32>
    %w1e = tensor.empty() : tensor<7x768xf32>
    %w1 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w1e : tensor<7x768xf32>) {
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
    } -> tensor<7x768xf32>
    %ie1 = tensor.empty() : tensor<3x7xf32>
    %init1 = linalg.fill ins(%zero : f32) outs(%ie1 : tensor<3x7xf32>) -> tensor<3x7xf32>
    %y31 = call @case1(%x31, %w1) : (tensor<1x3x768xf32>, tensor<7x768xf32>) -> tensor<1x3x7xf32>
    %y1 = tensor.collapse_shape %y31 [[0, 1], [2]] : tensor<1x3x7xf32> into tensor<3x7xf32>
    %yd1 = tensor.cast %y1 : tensor<3x7xf32> to tensor<?x?xf32>
    %ref1 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1, %w1 : tensor<3x768xf32>, tensor<7x768xf32>) outs(%init1 : tensor<3x7xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<3x7xf32>
    %rd1 = tensor.cast %ref1 : tensor<3x7xf32> to tensor<?x?xf32>
    call @check(%yd1, %rd1) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 2: 1 x 100 x 13, bias.
    %x2e = tensor.empty() : tensor<1x100xf32>
    %x2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x2e : tensor<1x100xf32>) {
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
    } -> tensor<1x100xf32>
    %x32 = tensor.expand_shape %x2 [[0, 1], [2]] output_shape [1, 1, 100] : tensor<1x100xf32> into tensor<1x1x100xf32>
    %w2e = tensor.empty() : tensor<13x100xf32>
    %w2 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w2e : tensor<13x100xf32>) {
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
    } -> tensor<13x100xf32>
    %b22e = tensor.empty() : tensor<1x13xf32>
    %b22 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%b22e : tensor<1x13xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c1 : index
      %bj = arith.muli %j, %c7 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<1x13xf32>
    %b2 = tensor.collapse_shape %b22 [[0, 1]] : tensor<1x13xf32> into tensor<13xf32>
    %ie2 = tensor.empty() : tensor<1x13xf32>
    %init2 = linalg.broadcast ins(%b2 : tensor<13xf32>) outs(%ie2 : tensor<1x13xf32>) dimensions = [0]
    %y32 = call @case2(%x32, %w2, %b2) : (tensor<1x1x100xf32>, tensor<13x100xf32>, tensor<13xf32>) -> tensor<1x1x13xf32>
    %y2 = tensor.collapse_shape %y32 [[0, 1], [2]] : tensor<1x1x13xf32> into tensor<1x13xf32>
    %yd2 = tensor.cast %y2 : tensor<1x13xf32> to tensor<?x?xf32>
    %ref2 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2, %w2 : tensor<1x100xf32>, tensor<13x100xf32>) outs(%init2 : tensor<1x13xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<1x13xf32>
    %rd2 = tensor.cast %ref2 : tensor<1x13xf32> to tensor<?x?xf32>
    call @check(%yd2, %rd2) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 3: 3 x 100 x 5.
    %x3e = tensor.empty() : tensor<3x100xf32>
    %x3 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x3e : tensor<3x100xf32>) {
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
    } -> tensor<3x100xf32>
    %x33 = tensor.expand_shape %x3 [[0, 1], [2]] output_shape [1, 3, 100] : tensor<3x100xf32> into tensor<1x3x100xf32>
    %w3e = tensor.empty() : tensor<5x100xf32>
    %w3 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w3e : tensor<5x100xf32>) {
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
    } -> tensor<5x100xf32>
    %ie3 = tensor.empty() : tensor<3x5xf32>
    %init3 = linalg.fill ins(%zero : f32) outs(%ie3 : tensor<3x5xf32>) -> tensor<3x5xf32>
    %y33 = call @case3(%x33, %w3) : (tensor<1x3x100xf32>, tensor<5x100xf32>) -> tensor<1x3x5xf32>
    %y3 = tensor.collapse_shape %y33 [[0, 1], [2]] : tensor<1x3x5xf32> into tensor<3x5xf32>
    %yd3 = tensor.cast %y3 : tensor<3x5xf32> to tensor<?x?xf32>
    %ref3 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x3, %w3 : tensor<3x100xf32>, tensor<5x100xf32>) outs(%init3 : tensor<3x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<3x5xf32>
    %rd3 = tensor.cast %ref3 : tensor<3x5xf32> to tensor<?x?xf32>
    call @check(%yd3, %rd3) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 4: 1 x 37 x 11.
    %x4e = tensor.empty() : tensor<1x37xf32>
    %x4 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x4e : tensor<1x37xf32>) {
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
    } -> tensor<1x37xf32>
    %x34 = tensor.expand_shape %x4 [[0, 1], [2]] output_shape [1, 1, 37] : tensor<1x37xf32> into tensor<1x1x37xf32>
    %w4e = tensor.empty() : tensor<11x37xf32>
    %w4 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w4e : tensor<11x37xf32>) {
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
    } -> tensor<11x37xf32>
    %ie4 = tensor.empty() : tensor<1x11xf32>
    %init4 = linalg.fill ins(%zero : f32) outs(%ie4 : tensor<1x11xf32>) -> tensor<1x11xf32>
    %y34 = call @case4(%x34, %w4) : (tensor<1x1x37xf32>, tensor<11x37xf32>) -> tensor<1x1x11xf32>
    %y4 = tensor.collapse_shape %y34 [[0, 1], [2]] : tensor<1x1x11xf32> into tensor<1x11xf32>
    %yd4 = tensor.cast %y4 : tensor<1x11xf32> to tensor<?x?xf32>
    %ref4 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x4, %w4 : tensor<1x37xf32>, tensor<11x37xf32>) outs(%init4 : tensor<1x11xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<1x11xf32>
    %rd4 = tensor.cast %ref4 : tensor<1x11xf32> to tensor<?x?xf32>
    call @check(%yd4, %rd4) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 5: 3 x 37 x 9, bias.
    %x5e = tensor.empty() : tensor<3x37xf32>
    %x5 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x5e : tensor<3x37xf32>) {
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
    } -> tensor<3x37xf32>
    %x35 = tensor.expand_shape %x5 [[0, 1], [2]] output_shape [1, 3, 37] : tensor<3x37xf32> into tensor<1x3x37xf32>
    %w5e = tensor.empty() : tensor<9x37xf32>
    %w5 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w5e : tensor<9x37xf32>) {
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
    } -> tensor<9x37xf32>
    %b25e = tensor.empty() : tensor<1x9xf32>
    %b25 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%b25e : tensor<1x9xf32>) {
    ^bb0(%o: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %ai = arith.muli %i, %c1 : index
      %bj = arith.muli %j, %c7 : index
      %s = arith.addi %ai, %bj : index
      %m = arith.remui %s, %c101 : index
      %mi = arith.index_cast %m : index to i32
      %mf = arith.sitofp %mi : i32 to f32
      %q = arith.divf %mf, %f101 : f32
      %v = arith.subf %q, %half : f32
      linalg.yield %v : f32
    } -> tensor<1x9xf32>
    %b5 = tensor.collapse_shape %b25 [[0, 1]] : tensor<1x9xf32> into tensor<9xf32>
    %ie5 = tensor.empty() : tensor<3x9xf32>
    %init5 = linalg.broadcast ins(%b5 : tensor<9xf32>) outs(%ie5 : tensor<3x9xf32>) dimensions = [0]
    %y35 = call @case5(%x35, %w5, %b5) : (tensor<1x3x37xf32>, tensor<9x37xf32>, tensor<9xf32>) -> tensor<1x3x9xf32>
    %y5 = tensor.collapse_shape %y35 [[0, 1], [2]] : tensor<1x3x9xf32> into tensor<3x9xf32>
    %yd5 = tensor.cast %y5 : tensor<3x9xf32> to tensor<?x?xf32>
    %ref5 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x5, %w5 : tensor<3x37xf32>, tensor<9x37xf32>) outs(%init5 : tensor<3x9xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<3x9xf32>
    %rd5 = tensor.cast %ref5 : tensor<3x9xf32> to tensor<?x?xf32>
    call @check(%yd5, %rd5) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 6: 2 x 3 x 5.
    %x6e = tensor.empty() : tensor<2x3xf32>
    %x6 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x6e : tensor<2x3xf32>) {
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
    } -> tensor<2x3xf32>
    %x36 = tensor.expand_shape %x6 [[0, 1], [2]] output_shape [1, 2, 3] : tensor<2x3xf32> into tensor<1x2x3xf32>
    %w6e = tensor.empty() : tensor<5x3xf32>
    %w6 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w6e : tensor<5x3xf32>) {
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
    } -> tensor<5x3xf32>
    %ie6 = tensor.empty() : tensor<2x5xf32>
    %init6 = linalg.fill ins(%zero : f32) outs(%ie6 : tensor<2x5xf32>) -> tensor<2x5xf32>
    %y36 = call @case6(%x36, %w6) : (tensor<1x2x3xf32>, tensor<5x3xf32>) -> tensor<1x2x5xf32>
    %y6 = tensor.collapse_shape %y36 [[0, 1], [2]] : tensor<1x2x5xf32> into tensor<2x5xf32>
    %yd6 = tensor.cast %y6 : tensor<2x5xf32> to tensor<?x?xf32>
    %ref6 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x6, %w6 : tensor<2x3xf32>, tensor<5x3xf32>) outs(%init6 : tensor<2x5xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<2x5xf32>
    %rd6 = tensor.cast %ref6 : tensor<2x5xf32> to tensor<?x?xf32>
    call @check(%yd6, %rd6) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()

    // Case 7: 1 x 1 x 4.
    %x7e = tensor.empty() : tensor<1x1xf32>
    %x7 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%x7e : tensor<1x1xf32>) {
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
    } -> tensor<1x1xf32>
    %x37 = tensor.expand_shape %x7 [[0, 1], [2]] output_shape [1, 1, 1] : tensor<1x1xf32> into tensor<1x1x1xf32>
    %w7e = tensor.empty() : tensor<4x1xf32>
    %w7 = linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w7e : tensor<4x1xf32>) {
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
    } -> tensor<4x1xf32>
    %ie7 = tensor.empty() : tensor<1x4xf32>
    %init7 = linalg.fill ins(%zero : f32) outs(%ie7 : tensor<1x4xf32>) -> tensor<1x4xf32>
    %y37 = call @case7(%x37, %w7) : (tensor<1x1x1xf32>, tensor<4x1xf32>) -> tensor<1x1x4xf32>
    %y7 = tensor.collapse_shape %y37 [[0, 1], [2]] : tensor<1x1x4xf32> into tensor<1x4xf32>
    %yd7 = tensor.cast %y7 : tensor<1x4xf32> to tensor<?x?xf32>
    %ref7 = linalg.generic {indexing_maps = [#x, #woi, #y], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x7, %w7 : tensor<1x1xf32>, tensor<4x1xf32>) outs(%init7 : tensor<1x4xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %n = arith.negf %a : f32
      %p = arith.mulf %n, %b : f32
      %s = arith.subf %o, %p : f32
      linalg.yield %s : f32
    } -> tensor<1x4xf32>
    %rd7 = tensor.cast %ref7 : tensor<1x4xf32> to tensor<?x?xf32>
    call @check(%yd7, %rd7) : (tensor<?x?xf32>, tensor<?x?xf32>) -> ()
    return
  }
}
