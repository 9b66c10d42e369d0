// REQUIRES: torch
// Index arguments take NAME=INTEGER; integer arrays are converted to the
// signature's type (i32 ids here from an int64 .npy); --random-weights needs no
// weight file and is deterministic; without @forward the only public function
// is the entry.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/ids.npy', np.array([[3, -1, 7]], dtype=np.int64))"
// RUN: transformer-runner %s --input ids=%t/ids.npy --input offset=5 \
// RUN:   --random-weights 7 --output shifted=%t/o.npy | FileCheck %s
// RUN: %python -c "import numpy as np, sys; o = np.load('%t/o.npy'); sys.exit(0 if o.dtype == np.int32 and o.tolist() == [[8, 4, 12]] else f'bad {o!r}')"
// CHECK: shifted: 1x3 i32 [8, 4, 12]
// A 1-D '*weight' parameter is a norm scale: random values stay within 1 +- 0.05.
// CHECK-NEXT: scaled: 4 f32 [{{(0\.9[5-9]|1\.0[0-4])[0-9]*}}, {{(0\.9[5-9]|1\.0[0-4])[0-9]*}}, {{(0\.9[5-9]|1\.0[0-4])[0-9]*}}, {{(0\.9[5-9]|1\.0[0-4])[0-9]*}}]
//
// RUN: transformer-runner %s --input ids=%t/ids.npy --input offset=5 \
// RUN:   --random-weights 7 > %t/a.txt
// RUN: transformer-runner %s --input ids=%t/ids.npy --input offset=5 \
// RUN:   --random-weights 7 > %t/b.txt
// RUN: diff %t/a.txt %t/b.txt
//
// RUN: not transformer-runner %s --input ids=%t/ids.npy --input offset=five \
// RUN:   --random-weights 7 2>&1 | FileCheck %s --check-prefix=BADINT
// BADINT: error: input 'offset' (argument #1 of @shift, index): expected an integer, got 'five'
// RUN: %python -c "import numpy as np; np.save('%t/big.npy', np.array([[3, 1 << 40, 7]], dtype=np.int64))"
// RUN: not transformer-runner %s --input ids=%t/big.npy --input offset=5 \
// RUN:   --random-weights 7 2>&1 | FileCheck %s --check-prefix=RANGE
// RANGE: error: input 'ids' ({{.*}}big.npy): element 1 does not fit i32

#id = affine_map<(i, j) -> (i, j)>
#v = affine_map<(i) -> (i)>
func.func @shift(%ids: tensor<1x3xi32> {tfm.input = "ids"},
                 %off: index {tfm.input = "offset"},
                 %scale: tensor<4xf32> {tfm.param = "ln_f.weight"})
    -> (tensor<1x3xi32> {tfm.output = "shifted"}, tensor<4xf32> {tfm.output = "scaled"}) {
  %o = arith.index_cast %off : index to i32
  %e = tensor.empty() : tensor<1x3xi32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<1x3xi32>) outs(%e : tensor<1x3xi32>) {
  ^bb0(%a: i32, %b: i32):
    %s = arith.addi %a, %o : i32
    linalg.yield %s : i32
  } -> tensor<1x3xi32>
  %e2 = tensor.empty() : tensor<4xf32>
  %c = linalg.generic {indexing_maps = [#v, #v], iterator_types = ["parallel"]}
      ins(%scale : tensor<4xf32>) outs(%e2 : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<4xf32>
  return %r, %c : tensor<1x3xi32>, tensor<4xf32>
}
