// RUN: transformer-opt %s --tfm-inline-alloca-scopes | FileCheck %s

// convert-scf-to-openmp wraps each worksharing loop body in an alloca_scope;
// a scope with no alloca of its own is inlined (its results replaced by
// what it returned), one that scopes an alloca stays, and an alloca that
// belongs to a nested scope does not keep the outer one.

// CHECK-LABEL: func.func @no_alloca
// CHECK-NOT: memref.alloca_scope
// CHECK: %[[V:.*]] = memref.load
// CHECK: %[[S:.*]] = arith.addf %[[V]], %[[V]]
// CHECK: memref.store %[[S]]
// CHECK: return %[[S]]
func.func @no_alloca(%m: memref<4xf32>, %i: index) -> f32 {
  %r = memref.alloca_scope -> f32 {
    %v = memref.load %m[%i] : memref<4xf32>
    %s = arith.addf %v, %v : f32
    memref.store %s, %m[%i] : memref<4xf32>
    memref.alloca_scope.return %s : f32
  }
  return %r : f32
}

// CHECK-LABEL: func.func @scoped_alloca
// CHECK: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<16xf32>
func.func @scoped_alloca() {
  memref.alloca_scope {
    %a = memref.alloca() : memref<16xf32>
    memref.alloca_scope.return
  }
  return
}

// CHECK-LABEL: func.func @nested
// CHECK-NEXT: memref.alloca_scope {
// CHECK-NEXT: memref.alloca() : memref<8xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @nested() {
  memref.alloca_scope {
    memref.alloca_scope {
      %a = memref.alloca() : memref<8xf32>
      memref.alloca_scope.return
    }
    memref.alloca_scope.return
  }
  return
}
