"""MLIR text shared by the numerics generators in this folder."""

# The opening of the module, with @check(y, ref, atol, rtol): prints
# [number of elements outside atol + rtol * |ref|, max abs error].
MODULE_PROLOGUE = """
module {
  func.func private @printMemrefF32(memref<*xf32>) attributes {llvm.emit_c_interface}

  // Prints [number of mismatching elements, max abs error].
  func.func private @check(%y: tensor<?xf32>, %ref: tensor<?xf32>, %atol: f32, %rtol: f32) {
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %bad0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %max0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
        ins(%y, %ref : tensor<?xf32>, tensor<?xf32>) outs(%bad0, %max0 : tensor<f32>, tensor<f32>) {
    ^bb0(%a: f32, %b: f32, %bad: f32, %mx: f32):
      %d = arith.subf %a, %b : f32
      %ad = math.absf %d : f32
      %ab = math.absf %b : f32
      %tol0 = arith.mulf %rtol, %ab : f32
      %tol = arith.addf %atol, %tol0 : f32
      // NaN compares unordered: counts as a mismatch.
      %ok = arith.cmpf ole, %ad, %tol : f32
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
"""
