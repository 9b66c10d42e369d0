// RUN: transformer-opt %s --tfm-sequential-small-foralls | FileCheck %s

// Two iterations are not worth waking threads for: a sequential loop.
// Eight are: the forall stays (and becomes an OpenMP loop in the pipeline).
// CHECK-LABEL: func.func @loops
// CHECK-NOT: scf.forall (%{{.*}}) in (2)
// CHECK: scf.for %{{.*}} = %c0 to %c2 step %c1
// CHECK: scf.forall (%{{.*}}) in (8)
func.func @loops(%a: memref<8xf32>) {
  %one = arith.constant 1.0 : f32
  scf.forall (%i) in (2) {
    memref.store %one, %a[%i] : memref<8xf32>
  }
  scf.forall (%i) in (8) {
    memref.store %one, %a[%i] : memref<8xf32>
  }
  return
}
